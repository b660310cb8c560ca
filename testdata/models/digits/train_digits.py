#!/usr/bin/env python3
"""Trains the zoo's digits classifier and writes its weights and held-out set as .npy files.

The 8x8 handwritten digits of scikit-learn's bundled dataset (1797 images, Debian's python3-sklearn,
no download), split 80/20 stratified with a fixed seed. Model: 64 -> dense(32) + relu -> dense(10)
(softmax at inference), trained with scikit-learn's MLPClassifier (adam, fixed seed). Pixels are
scaled to [0, 1] (value / 16). Weights are written in TVM's dense layout [units, in_features].

Run: /usr/bin/python3 testdata/models/digits/train_digits.py [OUT_DIR]   (default: this directory)
Outputs: digits_w1.npy [32,64], digits_b1.npy [32], digits_w2.npy [10,32], digits_b2.npy [10],
         digits_test_x.npy float32 [N,64], digits_test_y.npy int64 [N], digits_meta.json
"""
import json
import os
import sys

import numpy as np
import sklearn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=42, stratify=y)
    clf = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", solver="adam", alpha=1e-4,
                        max_iter=600, random_state=0)
    clf.fit(x_train, y_train)

    w1 = clf.coefs_[0].T.astype(np.float32)  # [32, 64]
    b1 = clf.intercepts_[0].astype(np.float32)
    w2 = clf.coefs_[1].T.astype(np.float32)  # [10, 32]
    b2 = clf.intercepts_[1].astype(np.float32)

    # Accuracy of exactly what the runtime computes (float32, same layout).
    h = np.maximum(x_test @ w1.T + b1, 0.0)
    logits = h @ w2.T + b2
    accuracy = float((logits.argmax(axis=1) == y_test).mean())
    train_accuracy = float(clf.score(x_train, y_train))

    for name, value in [("digits_w1", w1), ("digits_b1", b1), ("digits_w2", w2), ("digits_b2", b2),
                        ("digits_test_x", x_test), ("digits_test_y", y_test)]:
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(value))
    meta = {
        "dataset": "sklearn.datasets.load_digits (8x8, 1797 images)",
        "split": "train_test_split(test_size=0.2, random_state=42, stratify=y)",
        "model": "64 -> dense(32) relu -> dense(10) softmax",
        "n_train": int(len(y_train)),
        "n_test": int(len(y_test)),
        "train_accuracy": round(train_accuracy, 4),
        "test_accuracy": round(accuracy, 4),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
    }
    with open(os.path.join(out, "digits_meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
