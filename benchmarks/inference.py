"""Inference latency (milliseconds per batch, median) of ResNet18 and
MobileNetV2 on 3x224x224 images and a BERT-style encoder (4 layers, hidden
512, 8 heads, FFN 2048, sequence 128) at batch 1 and 16, in oar's inference
runtime against oar eager, PyTorch eager, torch.compile, ONNX Runtime (on the
PyTorch twin exported to ONNX) and Paddle Inference, with the same threads.

Frameworks: oar (the inference runtime: jit.save, then a predictor),
oar-eager, torch, torch-compile, onnxruntime, paddle (Paddle Inference on a
paddle.jit.save'd model; oar and paddle run the same model code). Weights are
random; every framework runs the same architecture in float32.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

FRAMEWORKS = ("oar", "oar-eager", "torch", "torch-compile", "onnxruntime", "paddle")
PEERS = ("oar-eager", "torch", "torch-compile", "onnxruntime", "paddle")
ENCODER = dict(vocab=8192, width=512, layers=4, heads=8, ffn=2048, seq=128)
BATCHES = (1, 16)
MODELS = ("resnet18", "mobilenetv2", "encoder")


def inputs(model, batch):
    rng = np.random.default_rng(0)
    if model == "encoder":
        return rng.integers(0, ENCODER["vocab"], (batch, ENCODER["seq"])).astype(np.int64)
    return rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)


# ---------------------------------------------------------------- oar / paddle models

def paddle_like_model(fw, model):
    nn, F = fw.nn, fw.nn.functional
    if model == "resnet18":
        return fw.vision.models.resnet18(num_classes=1000)
    if model == "mobilenetv2":
        return fw.vision.models.mobilenet_v2(num_classes=1000)

    class EncoderLayer(nn.Layer):
        def __init__(self, w, h, ffn):
            super().__init__()
            self.qkv, self.proj = nn.Linear(w, 3 * w), nn.Linear(w, w)
            self.fc1, self.fc2 = nn.Linear(w, ffn), nn.Linear(ffn, w)
            self.ln1, self.ln2 = nn.LayerNorm(w, epsilon=1e-12), nn.LayerNorm(w, epsilon=1e-12)
            self.h = h

        def forward(self, x):
            s, w = x.shape[1:]  # (the batch dim is dynamic in the saved program)
            q, k, v = fw.split(self.qkv(x), 3, axis=-1)
            q, k, v = [t.reshape([-1, s, self.h, w // self.h]).transpose([0, 2, 1, 3]) for t in (q, k, v)]
            att = F.softmax(fw.matmul(q, k, transpose_y=True) * (1.0 / np.sqrt(w // self.h)), axis=-1)
            y = fw.matmul(att, v).transpose([0, 2, 1, 3]).reshape([-1, s, w])
            x = self.ln1(x + self.proj(y))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Encoder(nn.Layer):
        def __init__(self, c):
            super().__init__()
            self.tok, self.pos = nn.Embedding(c["vocab"], c["width"]), nn.Embedding(c["seq"], c["width"])
            self.ln = nn.LayerNorm(c["width"], epsilon=1e-12)
            self.layers = nn.LayerList([EncoderLayer(c["width"], c["heads"], c["ffn"]) for _ in range(c["layers"])])
            self.pos_ids = fw.arange(c["seq"])

        def forward(self, ids):
            x = self.ln(self.tok(ids) + self.pos(self.pos_ids))
            for layer in self.layers:
                x = layer(x)
            return x

    return Encoder(ENCODER)


def input_spec(fw, model):
    if model == "encoder":
        return [fw.static.InputSpec([None, ENCODER["seq"]], "int64", name="ids")]
    return [fw.static.InputSpec([None, 3, 224, 224], "float32", name="x")]


def predictor_case(predictor, x):
    """Copy in, run, copy out: what a serving loop does (Paddle Inference's API, which oar's follows)."""
    h = predictor.get_input_handle(predictor.get_input_names()[0])
    out = predictor.get_output_handle(predictor.get_output_names()[0])

    def run():
        h.reshape(list(x.shape))
        h.copy_from_cpu(x)
        predictor.run()
        return out.copy_to_cpu()
    return run


def oar_cases(fw, name, threads, tmp):
    for model in MODELS:
        fw.seed(0)
        net = paddle_like_model(fw, model)
        net.eval()
        if name == "oar-eager":
            for b in BATCHES:
                x = fw.to_tensor(inputs(model, b))

                def run(net=net, x=x):
                    with fw.no_grad():
                        return net(x)
                yield f"{model} b{b}", run, 1, "ms"
            continue
        prefix = str(Path(tmp) / model)
        fw.jit.save(net, prefix, input_spec=input_spec(fw, model))
        config = fw.inference.Config(prefix + ".json", prefix + ".safetensors")
        config.set_cpu_math_library_num_threads(threads)
        config.switch_ir_optim(True)
        config.enable_memory_optim()
        predictor = fw.inference.create_predictor(config)
        for b in BATCHES:
            yield f"{model} b{b}", predictor_case(predictor, inputs(model, b)), 1, "ms"


def paddle_cases(fw, threads, tmp):
    import os
    from paddle import inference
    for model in MODELS:
        fw.seed(0)
        net = paddle_like_model(fw, model)
        net.eval()
        prefix = str(Path(tmp) / model)
        fw.jit.save(net, prefix, input_spec=input_spec(fw, model))
        program = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
        config = inference.Config(program, prefix + ".pdiparams")
        config.set_cpu_math_library_num_threads(threads)
        config.enable_mkldnn()  # oneDNN: Paddle's fastest CPU path
        config.switch_ir_optim(True)
        config.disable_glog_info()  # (its memory_optimize pass fails on these PIR programs in 3.3)
        predictor = inference.create_predictor(config)
        for b in BATCHES:
            yield f"{model} b{b}", predictor_case(predictor, inputs(model, b)), 1, "ms"


# ---------------------------------------------------------------- torch, torch.compile, ONNX Runtime

def torch_cases(torch, name, threads, tmp):
    import torch_models
    twins = torch_models.build(torch)
    builders = {"resnet18": twins.ResNet18, "mobilenetv2": twins.MobileNetV2,
                "encoder": lambda: twins.Encoder(ENCODER)}
    for model in MODELS:
        torch.manual_seed(0)
        net = builders[model]()
        net.eval()
        if name == "onnxruntime":
            import onnxruntime as ort
            path = str(Path(tmp) / f"{model}.onnx")
            example = torch.from_numpy(inputs(model, 2))
            torch.onnx.export(net, (example,), path, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, dynamo=False)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
            for b in BATCHES:
                x = inputs(model, b)
                yield f"{model} b{b}", (lambda sess=sess, x=x: sess.run(None, {"x": x})), 1, "ms"
            continue
        fn = torch.compile(net) if name == "torch-compile" else net
        for b in BATCHES:
            x = torch.from_numpy(inputs(model, b))

            def run(fn=fn, x=x):
                with torch.inference_mode():
                    return fn(x)
            yield f"{model} b{b}", run, 1, "ms"


def cases(fw, name, quick):
    import os
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    with tempfile.TemporaryDirectory() as tmp:
        if name in ("oar", "oar-eager"):
            if name == "oar":
                import oar.inference  # noqa: F401
            import oar.vision.models  # noqa: F401
            yield from oar_cases(fw, name, threads, tmp)
        elif name == "paddle":
            yield from paddle_cases(fw, threads, tmp)
        else:
            yield from torch_cases(fw, name, threads, tmp)


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="2", frameworks=FRAMEWORKS)
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best", peers=PEERS)
    common.save_json(args.json, "inference", info, runs, {"encoder": ENCODER})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()
