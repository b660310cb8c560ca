"""An ONNX model equal to a zoo model of dense layers (testdata/models: mlp, big256), for ONNX Runtime
replicas beside sorun's (tests/ray/ray_serve_test.py).

usage: python onnx_from_graph.py GRAPH_JSON PARAMS OUT_ONNX      (the Python of tests/ray/install_ray.sh)

Reads the graph JSON and TVM's params file (the NDArray list format that sorun and TVM read) and writes
each sorun_dense_bias[_relu] node as Gemm(transB=1) [+ Relu] and sorun_softmax as Softmax; any other
kernel is an error. Also a module: read_params(path) -> {name: ndarray}, graph_sizes(graph) -> bytes of
the parameters and of the other tensors.
"""
import json
import struct
import sys

import numpy as np

_LIST_MAGIC = 0xF7E58D4F05049CB7
_ARRAY_MAGIC = 0xDD5E40F096B4A13F
_DTYPES = {(0, 32): np.int32, (0, 64): np.int64, (1, 8): np.uint8, (2, 32): np.float32, (2, 64): np.float64}


def read_params(path):
    """{name: array} of a TVM params file (header, names, then one DLTensor record each)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return values

    magic, _reserved, count = take("QQQ")
    if magic != _LIST_MAGIC:
        raise ValueError("%s: not a TVM params file" % path)
    names = []
    for _ in range(count):
        (n,) = take("Q")
        names.append(data[pos:pos + n].decode())
        pos += n
    (count,) = take("Q")
    out = {}
    for name in names[:count]:
        magic, _reserved, _dev_type, _dev_id, ndim, code, bits, _lanes = take("QQiiiBBH")
        if magic != _ARRAY_MAGIC:
            raise ValueError("%s: bad tensor record for %s" % (path, name))
        shape = take("q" * ndim)
        (nbytes,) = take("q")
        out[name] = np.frombuffer(data, _DTYPES[(code, bits)], int(np.prod(shape)), pos).reshape(shape)
        pos += nbytes
    return out


def graph_sizes(graph):
    """(parameter bytes, other tensor bytes) of a graph JSON: every non-parameter entry counted once."""
    params = {n["name"] for i, n in enumerate(graph["nodes"]) if n["op"] == "null" and i != graph["arg_nodes"][0]}
    shapes = graph["attrs"]["shape"][1]
    sizes = [int(np.prod(s)) * 4 for s in shapes]  # the zoo's dense models are float32 throughout
    entry = graph["node_row_ptr"]
    param_bytes = sum(sizes[entry[i]] for i, n in enumerate(graph["nodes"]) if n["name"] in params)
    return param_bytes, sum(sizes) - param_bytes


def build(graph_path, params_path, out_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    with open(graph_path) as f:
        graph = json.load(f)
    params = read_params(params_path)
    nodes, names = [], []
    shapes = graph["attrs"]["shape"][1]
    for i, node in enumerate(graph["nodes"]):
        ins = [names[e[0]] for e in node.get("inputs", [])]
        if node["op"] == "null":
            names.append(node["name"])
            continue
        func = node["attrs"]["func_name"]
        out = node["name"]
        if func in ("sorun_dense_bias", "sorun_dense_bias_relu"):
            gemm = out + "_gemm" if func.endswith("relu") else out
            nodes.append(helper.make_node("Gemm", ins[:3], [gemm], transB=1))
            if func.endswith("relu"):
                nodes.append(helper.make_node("Relu", [gemm], [out]))
        elif func == "sorun_softmax":
            nodes.append(helper.make_node("Softmax", ins[:1], [out], axis=-1))
        else:
            raise SystemExit("onnx_from_graph: kernel %s is not supported" % func)
        names.append(out)
    data = graph["nodes"][graph["arg_nodes"][0]]["name"]
    head = graph["heads"][0][0]
    entry = graph["node_row_ptr"]
    model = helper.make_model(
        helper.make_graph(
            nodes, "zoo",
            [helper.make_tensor_value_info(data, TensorProto.FLOAT, shapes[entry[graph["arg_nodes"][0]]])],
            [helper.make_tensor_value_info(names[head], TensorProto.FLOAT, shapes[entry[head]])],
            [numpy_helper.from_array(np.ascontiguousarray(params[n]), n) for n in names if n in params]),
        opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, out_path)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    build(*sys.argv[1:])
