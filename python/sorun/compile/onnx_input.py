"""Reading the ONNX file: its inputs and their shapes (given, or taken from the file, a dynamic batch kept
symbolic), and the operators TVM's ONNX frontend cannot import (refused before TVM sees the graph)."""
import os

from .errors import CompileError


class InputSpec:
    """One graph input: name, dtype (numpy name) and shape; a dimension is an int or a str (symbolic,
    decided at run time: e.g. a dynamic batch "N")."""

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, list(shape)

    @property
    def dynamic(self):
        return any(not isinstance(d, int) for d in self.shape)

    def describe(self):
        return "%s %s[%s]" % (self.name, self.dtype, ", ".join(str(d) for d in self.shape))


def parse_shape_flag(text):
    """'name:1x3x224x224' -> (name, [1, 3, 224, 224]); a dim may be a name (symbolic: 'x:Nx8')."""
    name, sep, dims = text.rpartition(":")
    if not sep or not name or not dims:
        raise CompileError("onnx", "--input %r: expected NAME:D1xD2x... (e.g. data:1x3x224x224)" % text)
    shape = []
    for d in dims.split("x"):
        if d.isdigit() and int(d) > 0:
            shape.append(int(d))
        elif d.isidentifier():
            shape.append(d)
        else:
            raise CompileError("onnx", "--input %r: dimension %r is neither a positive size nor a name" % (text, d))
    return name, shape


def load_model(path):
    """The ONNX ModelProto at `path` (external data next to it is loaded too)."""
    import onnx  # pylint: disable=import-outside-toplevel

    if not os.path.isfile(path):
        raise CompileError("onnx", "%s: no such file" % path)
    try:
        model = onnx.load(path)
    except Exception as e:  # protobuf's DecodeError and friends: the file is not an ONNX model
        raise CompileError("onnx", "%s: not an ONNX model (%s)" % (path, str(e).splitlines()[0] if str(e) else
                                                                    type(e).__name__)) from None
    if not model.graph.node:
        raise CompileError("onnx", "%s: the graph has no nodes (not an ONNX model, or an empty one)" % path)
    return model


def graph_inputs(model, path, given):
    """The graph's inputs (initializers excluded) with their shapes: `given` ({name: shape} from --input)
    wins; else the file's (a named dimension stays symbolic); an input with an unknown dimension is refused."""
    from onnx import helper  # pylint: disable=import-outside-toplevel

    initializers = {i.name for i in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            raise CompileError("onnx", "%s: input %r is not a tensor" % (path, value.name))
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type).name
        if value.name in given:
            shape = given[value.name]
            if t.HasField("shape") and len(t.shape.dim) != len(shape):
                raise CompileError("onnx", "--input %s: %d dimensions given, the file says %d" %
                                   (value.name, len(shape), len(t.shape.dim)))
        else:
            if not t.HasField("shape"):
                raise CompileError("onnx", "%s: input %r has no shape in the file: give --input %s:D1xD2x..." %
                                   (path, value.name, value.name))
            shape = []
            for i, d in enumerate(t.shape.dim):
                if d.HasField("dim_value") and d.dim_value > 0:
                    shape.append(int(d.dim_value))
                elif d.HasField("dim_param") and d.dim_param:
                    shape.append(d.dim_param if d.dim_param.isidentifier() else "d%d" % i)
                else:
                    raise CompileError("onnx", "%s: input %r dimension %d has no size or name in the file: give "
                                       "--input %s:D1xD2x..." % (path, value.name, i, value.name))
        specs.append(InputSpec(value.name, dtype, shape))
    unknown = sorted(set(given) - {s.name for s in specs})
    if unknown:
        raise CompileError("onnx", "--input %s: the graph has no input of that name (inputs: %s)" %
                           (unknown[0], ", ".join(s.name for s in specs)))
    if not specs:
        raise CompileError("onnx", "%s: the graph has no inputs besides its weights" % path)
    return specs


def unsupported_operators(model, convert_map):
    """[(op_type, first node name, opset)] of the nodes whose operator `convert_map` (TVM's ONNX frontend
    table) lacks, in graph order."""
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    seen, out = set(), []
    for i, node in enumerate(model.graph.node):
        if node.op_type in convert_map or node.op_type in seen:
            continue
        seen.add(node.op_type)
        out.append((node.op_type, node.name or "#%d" % i, opsets.get(node.domain or "ai.onnx")))
    return out
