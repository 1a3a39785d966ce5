"""Trains a small CNN on scikit-learn's handwritten digits (1,797 real 8x8
images) with the high-level API, saves a checkpoint, reloads it into a fresh
model and checks that the held-out accuracy is unchanged; then exports the
model (oar.jit.save) and classifies the held-out images with the inference
runtime, which must agree with the eager model.

    python examples/train_digits.py [--epochs N] [--out DIR]
"""
import argparse
import os
import sys
import time

import numpy as np

import oar
import oar.inference
import oar.nn as nn
from oar.static import InputSpec
from oar.vision.datasets import Digits


def make_net():
    return nn.Sequential(
        nn.Conv2D(1, 32, 3, padding=1), nn.BatchNorm2D(32), nn.ReLU(),
        nn.Conv2D(32, 64, 3, padding=1), nn.BatchNorm2D(64), nn.ReLU(),
        nn.MaxPool2D(2),  # 64 x 4 x 4
        nn.Flatten(),
        nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 10),
    )


def prepared(net, steps_per_epoch=None, epochs=None):
    model = oar.Model(net)
    opt = None
    if steps_per_epoch:
        sched = oar.optimizer.lr.CosineAnnealingDecay(learning_rate=2e-3, T_max=steps_per_epoch * epochs)
        opt = oar.optimizer.AdamW(learning_rate=sched, parameters=net.parameters(), weight_decay=1e-4)
    model.prepare(opt, nn.CrossEntropyLoss(), oar.metric.Accuracy())
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--out", default=os.path.join("build", "demo"))
    args = ap.parse_args()
    oar.seed(2024)
    train, test = Digits(mode="train"), Digits(mode="test")
    print(f"digits: {len(train)} training and {len(test)} held-out images of 8x8 pixels")

    batch = 64
    steps = (len(train) + batch - 1) // batch
    model = prepared(make_net(), steps, args.epochs)
    model.summary((1, 1, 8, 8))
    t0 = time.time()
    model.fit(train, epochs=args.epochs, batch_size=batch, shuffle=True, verbose=1,
              callbacks=[oar.callbacks.LRScheduler(by_step=True, by_epoch=False)])
    print(f"trained in {time.time() - t0:.1f} s")
    acc = model.evaluate(test, batch_size=256, verbose=0)["acc"]
    print(f"held-out accuracy: {acc:.4f}")

    path = os.path.join(args.out, "digits_cnn")
    model.save(path)
    fresh = prepared(make_net())
    fresh.load(path)
    acc2 = fresh.evaluate(test, batch_size=256, verbose=0)["acc"]
    print(f"reloaded from {path}.pdparams: held-out accuracy {acc2:.4f}")

    # Export, then classify the held-out images with the inference runtime.
    net = fresh.network
    net.eval()
    oar.jit.save(net, path, input_spec=[InputSpec([None, 1, 8, 8], "float32", "image")])
    predictor = oar.inference.create_predictor(oar.inference.Config(path + ".json", path + ".safetensors"))
    (logits,) = predictor.run([test.images])
    acc3 = float((logits.argmax(axis=1) == test.labels).mean())
    with oar.no_grad():
        eager = net(oar.to_tensor(test.images)).numpy()
    agree = np.allclose(logits, eager, rtol=1e-4, atol=1e-4)
    print(f"exported to {path}.json and run by the inference runtime: held-out accuracy {acc3:.4f}, "
          f"logits {'equal to' if agree else 'DIFFERENT from'} eager")

    if acc < 0.97 or acc2 != acc or acc3 != acc or not agree:
        print("FAILED: expected accuracy >= 0.97, the same accuracy after reloading and in the runtime",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
