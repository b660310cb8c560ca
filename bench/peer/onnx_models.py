"""Hand-built ONNX models for the peer benchmark (bench/peer/README.md): no downloads, seeded weights.

usage: python onnx_models.py OUT_DIR [resnet18 mobilenetv2 ...]     (the Python of bench/peer/install_peer.sh)

Writes OUT_DIR/MODEL/model.onnx and OUT_DIR/MODEL/input_data.npy (float32 1x3x224x224, seed 1) for:
  resnet18     ResNet-18's layer structure (7x7/2 stem, max pool, 4 stages of 2 basic blocks with
               64/128/256/512 channels, global average pool, 1000-way Gemm); batch norm folded into the
               convolutions' biases (what an exporter's constant folding leaves), 11.7 M parameters.
  mobilenetv2  MobileNetV2 1.0 (17 inverted-residual blocks, ReLU6 as Clip(0, 6), depthwise 3x3 as
               grouped Conv, 1280-channel head, 1000-way Gemm), 3.5 M parameters.
Weights: He-normal from numpy RandomState(0) (biases small), so activations stay in range and every
runtime's output can be compared. Opset 13, input "data", one output.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, prefix):
        self.n += 1
        return "%s_%d" % (prefix, self.n)

    def const(self, prefix, array):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        b = self.rng.uniform(-0.05, 0.05, (cout,))
        y = self.op("Conv", [x, self.const("w", w), self.const("b", b)], kernel_shape=[k, k],
                    strides=[stride, stride], pads=[k // 2] * 4, group=group)
        if act == "relu":
            return self.op("Relu", [y])
        if act == "relu6":
            return self.op("Clip", [y, self.const("lo", 0.0), self.const("hi", 6.0)])
        return y

    def head(self, x, cin, classes=1000):
        y = self.op("Flatten", [self.op("GlobalAveragePool", [x])], axis=1)
        w = self.rng.normal(0, np.sqrt(1.0 / cin), (classes, cin))
        return self.op("Gemm", [y, self.const("fc_w", w), self.const("fc_b", np.zeros(classes))], transB=1)

    def model(self, out, name):
        graph = helper.make_graph(self.nodes, name,
                                  [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 224, 224])],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 1000])], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="sorun-bench-peer")
        m.ir_version = 7  # opset 13; readable by onnx 1.8+ and every runtime here
        onnx.checker.check_model(m)
        return m


def resnet18():
    b = Builder()
    x = b.conv("data", 3, 64, 7, stride=2)
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = b.conv(x, cin, cout, 3, stride)
            y = b.conv(y, cout, cout, 3, 1, act=None)
            skip = x if stride == 1 and cin == cout else b.conv(x, cin, cout, 1, stride, act=None)
            x = b.op("Relu", [b.op("Add", [y, skip])])
            cin = cout
    return b.model(b.head(x, 512), "resnet18")


def mobilenetv2():
    b = Builder()
    x = b.conv("data", 3, 32, 3, stride=2, act="relu6")
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = b.conv(x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = b.conv(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = b.conv(y, hidden, c, 1, act=None)
            x = b.op("Add", [x, y]) if stride == 1 and cin == c else y
            cin = c
    x = b.conv(x, cin, 1280, 1, act="relu6")
    return b.model(b.head(x, 1280), "mobilenetv2")


MODELS = {"resnet18": resnet18, "mobilenetv2": mobilenetv2}


def main(argv):
    out_dir, names = argv[1], argv[2:] or list(MODELS)
    for name in names:
        d = os.path.join(out_dir, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(MODELS[name](), os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "input_data.npy"),
                np.random.RandomState(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32))
        print("%s: %s" % (name, os.path.join(d, "model.onnx")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
