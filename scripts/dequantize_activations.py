"""Rewrites a dynamically quantized ONNX graph (onnxruntime.quantization.quantize_dynamic) into one whose
activations stay float32: each DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(scale) chain becomes
one MatMul on the dequantized int8 weights. The weights keep their int8 rounding; what goes is the
activation scale that DynamicQuantizeLinear takes over the whole batch tensor, which made a pair's score
depend on the other pairs and the padding in its batch (docs/training.md). Weight-only DequantizeLinear
nodes (embedding tables) are kept: they do not depend on the batch.

    python scripts/dequantize_activations.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    drop = set()
    new_inits = []
    replaced = 0
    for n in list(g.node):
        if n.op_type != "MatMulInteger":
            continue
        xq, wq, _xzp, wzp = n.input
        dql = producer[xq]
        assert dql.op_type == "DynamicQuantizeLinear", dql.op_type
        (cast,) = consumers[n.output[0]]
        assert cast.op_type == "Cast"
        (mul,) = consumers[cast.output[0]]
        assert mul.op_type == "Mul"
        scales = producer[mul.input[1]]
        assert scales.op_type == "Mul"
        w_scale_name = [i for i in scales.input if i in inits]
        assert len(w_scale_name) == 1, scales.input
        w = numpy_helper.to_array(inits[wq]).astype(np.float32)
        zp = numpy_helper.to_array(inits[wzp]).astype(np.float32)
        s = numpy_helper.to_array(inits[w_scale_name[0]]).astype(np.float32)
        name = f"{wq}_dequantized"
        new_inits.append(numpy_helper.from_array(((w - zp) * s).astype(np.float32), name))
        g.node.insert(list(g.node).index(n), helper.make_node("MatMul", [dql.input[0], name], [mul.output[0]]))
        drop.update([id(n), id(cast), id(mul)])
        replaced += 1
    kept = [n for n in g.node if id(n) not in drop]
    del g.node[:]
    g.node.extend(kept)
    g.initializer.extend(new_inits)
    prune(g)
    return model, replaced


def prune(g) -> None:
    """Removes nodes and initializers nothing reads any more (the quantize chains left behind)."""
    while True:
        used = {o.name for o in g.output}
        for n in g.node:
            used.update(n.input)
        dead = [n for n in g.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            g.node.remove(n)
    used = set()
    for n in g.node:
        used.update(n.input)
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)


if __name__ == "__main__":
    model, n = rewrite(onnx.load(sys.argv[1]))
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"{n} MatMulInteger chains rewritten -> {sys.argv[2]}")
