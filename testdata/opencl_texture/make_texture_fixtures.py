"""Writes the texture-memory fixtures: real TVM exports whose OpenCL kernels use image2d memory.

usage: ~/.cache/sorun/tvm-venv/bin/python make_texture_fixtures.py [OUT_DIR]   (default: this directory)

TVM 0.16 (hhb-tvm, Relay + graph executor), target Target("opencl -device=adreno", host="llvm
-mtriple=x86_64-linux-gnu"): the Adreno schedules keep activations and packed weights in texture
memory, so the graph JSON has "global.texture*" storage_scope entries and the host code calls
"device_api.opencl.alloc_nd" / "free_nd" for the images inside fused kernels. Two models, the same
two 3x3 conv2d + bias + relu layers from seeded weights:

  conv_nchw_texture.so   NCHW: storage scopes global.texture and global.texture-weight
  conv_nhwc_texture.so   NHWC: storage scopes global.texture-nhwc and global.texture-weight

For each: <name>.input_0.npy (input "data") and <name>.output_0.npy, the output of TVM's graph
executor running the llvm build of the same model and weights (this TVM has no OpenCL runtime).
"""
import os
import sys

os.environ.setdefault("TOPHUB_LOCATION", "NONE")  # no pre-tuned logs from the network

LLVM_TARGET = "llvm -mtriple=x86_64-linux-gnu"


def conv_model(layout):
    import numpy as np
    import tvm
    from tvm import relay

    rng = np.random.RandomState(11)
    if layout == "NCHW":
        shape, kernel_layout, channel_axis = (1, 8, 16, 16), "OIHW", 1
        wshape = lambda cin, cout: (cout, cin, 3, 3)  # noqa: E731
    else:
        shape, kernel_layout, channel_axis = (1, 16, 16, 8), "HWIO", 3
        wshape = lambda cin, cout: (3, 3, cin, cout)  # noqa: E731
    x = relay.var("data", shape=shape, dtype="float32")
    params, args = {}, [x]

    def conv(y, name, cin, cout):
        w = relay.var(name + "_w", shape=wshape(cin, cout), dtype="float32")
        b = relay.var(name + "_b", shape=(cout,), dtype="float32")
        params[name + "_w"] = rng.normal(0, np.sqrt(2.0 / (cin * 9)), wshape(cin, cout)).astype("float32")
        params[name + "_b"] = rng.uniform(-0.1, 0.1, (cout,)).astype("float32")
        args.extend([w, b])
        y = relay.nn.conv2d(y, w, padding=(1, 1), channels=cout, kernel_size=(3, 3), data_layout=layout,
                            kernel_layout=kernel_layout)
        return relay.nn.relu(relay.nn.bias_add(y, b, axis=channel_axis))

    y = conv(conv(x, "c1", 8, 16), "c2", 16, 16)
    mod = tvm.IRModule.from_expr(relay.Function(args, y))
    inputs = {"data": np.random.RandomState(42).uniform(-1, 1, shape).astype("float32")}
    return mod, params, inputs


def build(target, mod, params):
    import tvm
    from tvm import relay

    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, target=target, params=params)


def run_llvm_reference(mod, params, inputs, tmp_path):
    import tvm
    from tvm.contrib import graph_executor

    build(LLVM_TARGET, mod, params).export_library(tmp_path)
    m = graph_executor.GraphModule(tvm.runtime.load_module(tmp_path)["default"](tvm.cpu()))
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    return m.get_output(0).numpy()


def main(argv):
    import json

    import numpy as np
    import tvm

    out = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    target = tvm.target.Target("opencl -device=adreno", host=LLVM_TARGET)
    for name, layout in (("conv_nchw_texture", "NCHW"), ("conv_nhwc_texture", "NHWC")):
        mod, params, inputs = conv_model(layout)
        lib = build(target, mod, params)
        scopes = sorted(set(json.loads(lib.get_graph_json())["attrs"]["storage_scope"][1]) - {"", "global"})
        if not scopes:
            raise RuntimeError("%s: the adreno build has no texture storage scope" % name)
        lib.export_library(os.path.join(out, name + ".so"))
        np.save(os.path.join(out, name + ".input_0.npy"), inputs["data"])
        ref = run_llvm_reference(mod, params, inputs, os.path.join(out, name + ".llvm_tmp.so"))
        os.remove(os.path.join(out, name + ".llvm_tmp.so"))
        np.save(os.path.join(out, name + ".output_0.npy"), ref)
        print("%s: TVM %s, texture scopes %s, output %s" % (name, tvm.__version__, scopes, ref.shape))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
