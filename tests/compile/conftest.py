"""ONNX models for the `sorun compile` tests, made with onnx.helper (no binary files in the repository)."""
import os

import numpy as np
import pytest


def small_net(path, batch="N"):
    """x[batch, 3, 16, 16] -> Conv(8, 3x3) + Relu -> GlobalAveragePool -> Flatten -> Gemm(10): y[batch, 10]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.RandomState(0)

    def init(name, shape):
        return numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r1"], ["g"], name="pool"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(nodes, "small_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                  [batch, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
                              [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (10, 8)), init("b2", (10,))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def det_net(path):
    """y = Det(x): an ONNX operator TVM 0.27's ONNX frontend does not have."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="determinant")], "det_net",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def shapeless_net(path):
    """y = Relu(x) with no shape on x in the file."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "shapeless", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx")
    return {
        "small": small_net(str(d / "small.onnx")),
        "det": det_net(str(d / "det.onnx")),
        "shapeless": shapeless_net(str(d / "shapeless.onnx")),
    }


@pytest.fixture(scope="session")
def sorun_bin():
    path = os.environ.get("SORUN_BIN", "")
    if not os.access(path, os.X_OK):
        pytest.skip("SORUN_BIN is not the sorun CLI (run_compile_tests.sh sets it)")
    return path
