// The optimizer's hyper-parameters are values of the module (state
// parameters optimizer.*, starting at lcc's flags), which lcc-train sets
// without recompiling: each step's update is replayed from the gradients
// that loss_gradients returns, with the values lcc-train was given rather
// than those compiled in; the learning-rate schedule is the one
// docs/runtime.md defines, also across a resumed run.

// RUN: lcc %s --train --optimizer=sgd --lr=0.1 --emit-gradients -o %t.sgd.lcm
// RUN: lcc %s --train --optimizer=adam --lr=0.1 --emit-gradients -o %t.adam.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=5
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=6
// RUN: lcc-run %t.sgd.lcm --init-params=%t.d/before.safetensors --seed=3
// RUN: lcc-run %t.sgd.lcm --function=loss_gradients --input=%t.d/x.npy --input=%t.d/labels.npy --params=%t.d/before.safetensors --output-dir=%t.d --results-file=%t.d/g1.safetensors

// They start at the compiled values; a fresh weights file holds none.
// RUN: lcc-run %t.sgd.lcm --list | FileCheck %s --check-prefix=LIST
// LIST: "optimizer.lr": [] f32, optimizer state, constant(0.1)
// LIST: "optimizer.weight_decay": [] f32, optimizer state, constant(0)
// LIST: "optimizer.grad_clip": [] f32, optimizer state, constant(0)
// RUN: %python %S/Inputs/train-check.py dump %t.d/before.safetensors | FileCheck %s --check-prefix=FRESH
// FRESH-NOT: optimizer

// SGD at --lr=0.5, not the compiled 0.1; with weight decay; clipped to a
// norm below the gradients'.
// RUN: lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --lr=0.5 --checkpoint=%t.d/lr.safetensors 2> %t.d/progress.txt
// RUN: %python %S/Inputs/train-check.py sgd-step %t.d/before.safetensors %t.d/g1.safetensors %t.d/lr.safetensors --lr=0.5 | FileCheck %s --check-prefix=LR
// LR: each parameter moved by -0.5 (1 g + 0 p)
// RUN: FileCheck %s --check-prefix=PROGRESS --input-file=%t.d/progress.txt
// PROGRESS: step 1/1  loss {{[0-9.]+}}  eval {{[0-9.]+}}  lr 5.00e-01  {{[0-9]+}} tokens/s
// RUN: lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --lr=0.5 --weight-decay=0.25 --checkpoint=%t.d/decay.safetensors
// RUN: %python %S/Inputs/train-check.py sgd-step %t.d/before.safetensors %t.d/g1.safetensors %t.d/decay.safetensors --lr=0.5 --weight-decay=0.25 | FileCheck %s --check-prefix=DECAY
// DECAY: each parameter moved by -0.5 (1 g + 0.25 p)
// RUN: lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --lr=0.5 --grad-clip=0.01 --checkpoint=%t.d/clip.safetensors
// RUN: %python %S/Inputs/train-check.py sgd-step %t.d/before.safetensors %t.d/g1.safetensors %t.d/clip.safetensors --lr=0.5 --grad-clip=0.01 | FileCheck %s --check-prefix=CLIP
// CLIP: each parameter moved by -0.5 (0.0{{[0-9]+}} g + 0 p)

// Two AdamW steps with every hyper-parameter set at run time: the second
// step resumes from the first's checkpoint (state included), its gradients
// taken there.
// RUN: lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --lr=0.02 --beta1=0.5 --beta2=0.75 --epsilon=0.001 --weight-decay=0.5 --checkpoint=%t.d/adam1.safetensors
// RUN: lcc-run %t.adam.lcm --function=loss_gradients --input=%t.d/x.npy --input=%t.d/labels.npy --params=%t.d/adam1.safetensors --output-dir=%t.d --results-file=%t.d/g2.safetensors
// RUN: lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/adam1.safetensors --steps=1 --lr=0.02 --beta1=0.5 --beta2=0.75 --epsilon=0.001 --weight-decay=0.5 --checkpoint=%t.d/adam2.safetensors
// RUN: %python %S/Inputs/train-check.py adam-steps %t.d/before.safetensors %t.d/g1.safetensors %t.d/g2.safetensors %t.d/adam2.safetensors --lr=0.02 --beta1=0.5 --beta2=0.75 --epsilon=0.001 --weight-decay=0.5 | FileCheck %s --check-prefix=ADAM
// ADAM: two AdamW steps replayed (beta1 0.5, beta2 0.75, eps 0.001)

// The schedule: a warmup of 3 steps, then cosine to --min-lr at step 10;
// 6 steps and 4 resumed ones follow the same curve when the first part
// is told the whole run's length.
// RUN: lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=10 --lr=0.01 --warmup=3 --schedule=cosine --min-lr=0.001 --report=json > %t.d/cosine.json
// RUN: %python %S/Inputs/train-check.py schedule %t.d/cosine.json --lr=0.01 --steps=10 --warmup=3 --min-lr=0.001 --schedule=cosine | FileCheck %s --check-prefix=COSINE
// COSINE: lr of steps 1-10 as scheduled: 0.003333 0.006667 0.01 0.009554 0.008306 0.006501 0.004499 0.002694 0.001446 0.001
// RUN: lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=6 --total-steps=10 --lr=0.01 --warmup=3 --schedule=linear --checkpoint=%t.d/six.safetensors --report=json > %t.d/six.json
// RUN: lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/six.safetensors --steps=4 --lr=0.01 --warmup=3 --schedule=linear --report=json > %t.d/four.json
// RUN: %python %S/Inputs/train-check.py schedule %t.d/six.json --lr=0.01 --steps=10 --warmup=3 --schedule=linear | FileCheck %s --check-prefix=SIX
// SIX: lr of steps 1-6 as scheduled
// RUN: %python %S/Inputs/train-check.py schedule %t.d/four.json --lr=0.01 --steps=10 --warmup=3 --schedule=linear --first=7 | FileCheck %s --check-prefix=FOUR
// FOUR: lr of steps 7-10 as scheduled: 0.004286 0.002857 0.001429 0

// Each wrong setting is one error line naming it.
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --beta1=0.5 2>&1 | FileCheck %s --check-prefix=NOBETA
// NOBETA: lcc-train: error: --beta1: {{.*}}.sgd.lcm has no beta1 (its optimizer, chosen by lcc --optimizer, does not use it)
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --lr=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: lcc-train: error: --lr must be > 0, got -1
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --lr=fast 2>&1 | FileCheck %s --check-prefix=TEXT
// TEXT: lcc-train: error: invalid --lr value 'fast'; expected a finite number (e.g. 3e-4)
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --lr=nan 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: lcc-train: error: invalid --lr value 'nan'; expected a finite number (e.g. 3e-4)
// RUN: not lcc-train %t.adam.lcm --data=%t.d/x.npy,%t.d/labels.npy --beta2=1 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: lcc-train: error: --beta2 must be in [0, 1), got 1
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --schedule=step 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: lcc-train: error: unknown --schedule value 'step'; expected 'constant', 'linear' or 'cosine'
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --min-lr=0.01 2>&1 | FileCheck %s --check-prefix=MINLR
// MINLR: lcc-train: error: --min-lr is where --schedule=linear or cosine ends; the constant schedule has none
// RUN: not lcc-train %t.sgd.lcm --data=%t.d/x.npy,%t.d/labels.npy --lr=0.01 --min-lr=0.1 --schedule=linear 2>&1 | FileCheck %s --check-prefix=ABOVE
// ABOVE: lcc-train: error: --min-lr=0.1 is above --lr=0.01; the schedule decays from --lr to --min-lr

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
