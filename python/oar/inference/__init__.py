"""``oar.inference``: the C++ inference runtime from Python, with Paddle Inference names.

A model saved by :func:`oar.jit.save` (``prefix.json`` + ``prefix.safetensors``)
runs without the Python front end: the program is loaded by the C++ runtime,
optimised by the graph passes, and executed with intermediate results placed
in one arena planned by liveness. The same library serves C++ programs
(``include/oar/inference.h``) and the ``oar-bench`` tool.

>>> import numpy as np, oar, os, tempfile
>>> from oar.static import InputSpec
>>> from oar.inference import Config, create_predictor
>>> net = oar.nn.Linear(4, 2)
>>> prefix = os.path.join(tempfile.mkdtemp(), "linear")
>>> oar.jit.save(net, prefix, input_spec=[InputSpec([None, 4], "float32", name="x")])
>>> config = Config(prefix)
>>> predictor = create_predictor(config)
>>> predictor.get_input_names()
['x']
>>> x = np.ones((3, 4), dtype="float32")
>>> handle = predictor.get_input_handle("x")
>>> handle.copy_from_cpu(x)
>>> predictor.run()
True
>>> out = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
>>> bool(np.allclose(out, net(oar.to_tensor(x)).numpy(), atol=1e-6))
True

Programs with control flow run too: branches (``oar.static.nn.cond``,
``switch_case``) and loops (``while_loop``, whose carried tensors may change
shape from one iteration to the next), nested to any depth, and PyLayer calls
(their recorded forward). Each request runs the branches and iterations its
data selects; a loop stops with RuntimeError after the limit set by
``oar.static.nn.set_max_loop_iterations``.

>>> from oar.static import nn
>>> class Flip(oar.nn.Layer):
...     def forward(self, x):
...         return nn.cond(x.sum() > 0, lambda: x * 2.0, lambda: -x)
>>> prefix = os.path.join(tempfile.mkdtemp(), "flip")
>>> spec = [InputSpec([None], "float32", name="x")]
>>> oar.jit.save(oar.jit.to_static(Flip(), input_spec=spec), prefix, input_spec=spec)
>>> p = create_predictor(Config(prefix))
>>> [p.run([np.array(v, "float32")])[0].tolist() for v in ([1.0, 2.0], [-3.0])]
[[2.0, 4.0], [3.0]]

One predictor runs one request at a time; :meth:`Predictor.clone` gives
another that shares the weights, for one predictor per thread (``run``
releases the GIL).
"""
import enum
import os
import threading

import numpy as np

import oar

from .. import _C

__all__ = ["Config", "create_predictor", "Predictor", "Tensor", "PrecisionType", "DataType", "get_version",
           "PlaceType", "PredictorPool", "XpuConfig", "get_num_bytes_of_data_type", "get_trt_compile_version",
           "get_trt_runtime_version"]


class PrecisionType(enum.IntEnum):
    """Precisions a Config can ask for; the CPU runtime runs ``Float32`` and ``Bfloat16``.

    >>> from oar.inference import PrecisionType
    >>> int(PrecisionType.Bfloat16)
    3
    """

    Float32 = 0
    Half = 1
    Int8 = 2
    Bfloat16 = 3


class DataType(enum.IntEnum):
    """Element types of input and output handles (``Tensor.type()``).

    >>> from oar.inference import DataType
    >>> DataType.FLOAT32.name
    'FLOAT32'
    """

    FLOAT32 = 0
    FLOAT64 = 1
    FLOAT16 = 2
    BFLOAT16 = 3
    INT64 = 4
    INT32 = 5
    INT16 = 6
    INT8 = 7
    UINT8 = 8
    BOOL = 9


_TYPE_NAMES = {t.name.lower(): t for t in DataType}
_TYPE_BYTES = {DataType.FLOAT32: 4, DataType.FLOAT64: 8, DataType.FLOAT16: 2, DataType.BFLOAT16: 2,
               DataType.INT64: 8, DataType.INT32: 4, DataType.INT16: 2, DataType.INT8: 1, DataType.UINT8: 1,
               DataType.BOOL: 1}


class PlaceType(enum.IntEnum):
    """Where a predictor runs; oar's runtime runs on the CPU.

    >>> from oar.inference import PlaceType
    >>> int(PlaceType.CPU), int(PlaceType.GPU)
    (0, 1)
    """

    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM = 4


def get_num_bytes_of_data_type(dtype):
    """Bytes per element of a DataType (Paddle 3.3 answers -1 for FLOAT16, BFLOAT16 and BOOL;
    oar gives their sizes).

    >>> from oar.inference import DataType, get_num_bytes_of_data_type
    >>> get_num_bytes_of_data_type(DataType.FLOAT32), get_num_bytes_of_data_type(DataType.BFLOAT16)
    (4, 2)
    """
    if not isinstance(dtype, DataType):
        raise TypeError(f"{_api('get_num_bytes_of_data_type')} expects an oar.inference.DataType, "
                        f"got {type(dtype).__name__}")
    return _TYPE_BYTES[dtype]


def get_trt_compile_version():
    """The TensorRT version oar was built with: (0, 0, 0), as oar does not use TensorRT
    (what Paddle answers when built without it).

    >>> from oar.inference import get_trt_compile_version
    >>> get_trt_compile_version()
    (0, 0, 0)
    """
    return (0, 0, 0)


def get_trt_runtime_version():
    """The TensorRT version loaded: (0, 0, 0), as oar does not use TensorRT.

    >>> from oar.inference import get_trt_runtime_version
    >>> get_trt_runtime_version()
    (0, 0, 0)
    """
    return (0, 0, 0)


class XpuConfig:
    """Settings for Kunlun XPUs (Paddle's ``paddle.inference.XpuConfig``), with
    Paddle's fields and defaults. oar has no XPU support: the object can be
    made and filled, and ``Config.set_xpu_config`` / ``enable_xpu`` raise.

    >>> from oar.inference import XpuConfig
    >>> x = XpuConfig(); x.device_id = 1
    >>> x.device_id, x.l3_size
    (1, 0)
    """

    def __init__(self):
        self.device_id = 0
        self.l3_size = 0
        self.l3_ptr = None
        self.l3_autotune_size = 0
        self.context_gm_size = -1
        self.context = None
        self.stream = None
        self.conv_autotune_level = 0
        self.conv_autotune_file = ""
        self.conv_autotune_file_writeback = False
        self.fc_autotune_level = 0
        self.fc_autotune_file = ""
        self.fc_autotune_file_writeback = False
        self.gemm_compute_precision = 1
        self.transformer_softmax_optimize_level = 0
        self.transformer_encoder_adaptive_seqlen = True
        self.quant_post_static_gelu_out_threshold = 10.0
        self.quant_post_dynamic_activation_method = 0
        self.quant_post_dynamic_weight_precision = 1
        self.quant_post_dynamic_op_types = []

    def __repr__(self):
        return f"oar.inference.XpuConfig(device_id={self.device_id})"


def _no_xpu(api):
    raise NotImplementedError(f"{_api(api)} oar has no XPU support: its inference runtime runs on the CPU; "
                              "leave the Config on the CPU (the default)")


def _api(name):
    return f"[oar.inference.{name}]"


def _path(value, what, api):
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{_api(api)} {what} must be a str or os.PathLike, got {type(value).__name__}")
    return os.fspath(value)


class Config:
    """What to load and how to run it (Paddle's ``paddle.inference.Config``).

    ``Config(prefix)`` takes the prefix given to :func:`oar.jit.save` (or its
    ``.json`` file, or a folder holding one saved model);
    ``Config(prog_file, params_file)`` names both files.

    >>> from oar.inference import Config
    >>> c = Config("/models/resnet")
    >>> c.prog_file(), c.params_file()
    ('/models/resnet.json', '/models/resnet.safetensors')
    >>> c.set_cpu_math_library_num_threads(2)
    >>> c.switch_ir_optim(False)
    >>> c.enable_mkldnn_bfloat16()
    >>> c.ir_optim(), c.mkldnn_bfloat16_enabled(), c.cpu_math_library_num_threads()
    (False, True, 2)
    """

    def __init__(self, prog_file=None, params_file=None):
        self._c = _C._InferConfig()
        self._mkldnn = False
        if prog_file is not None:
            self.set_model(prog_file, params_file)
        elif params_file is not None:
            raise ValueError(f"{_api('Config')} params_file given without prog_file")

    def set_model(self, prog_file, params_file=None):
        """Sets the model: a prefix/folder/.json file, or the program and weights files.

        >>> from oar.inference import Config
        >>> c = Config()
        >>> c.set_model("m.json", "w.safetensors")
        >>> c.params_file()
        'w.safetensors'
        """
        prog_file = _path(prog_file, "prog_file", "Config.set_model")
        if params_file is None:
            self._c.set_model(prog_file)
        else:
            self._c.set_model(prog_file, _path(params_file, "params_file", "Config.set_model"))

    def prog_file(self):
        """The program file (``.json``).

        >>> from oar.inference import Config
        >>> Config("m").prog_file()
        'm.json'
        """
        return self._c.prog_file()

    def params_file(self):
        """The weights file (``.safetensors``).

        >>> from oar.inference import Config
        >>> Config("m").params_file()
        'm.safetensors'
        """
        return self._c.params_file()

    def model_dir(self):
        """The folder given to the Config, or ``""``.

        >>> from oar.inference import Config
        >>> Config("m").model_dir()
        ''
        """
        return self._c.model_dir()

    def set_cpu_math_library_num_threads(self, n):
        """OpenMP threads for each ``run`` (0: the library default).

        >>> from oar.inference import Config
        >>> c = Config("m"); c.set_cpu_math_library_num_threads(4); c.cpu_math_library_num_threads()
        4
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{_api('Config.set_cpu_math_library_num_threads')} n must be an int, "
                            f"got {type(n).__name__}")
        self._c.set_cpu_math_library_num_threads(int(n))

    def cpu_math_library_num_threads(self):
        """The thread count set (0: the library default).

        >>> from oar.inference import Config
        >>> Config("m").cpu_math_library_num_threads()
        0
        """
        return self._c.cpu_math_library_num_threads()

    def switch_ir_optim(self, x=True):
        """Turns the graph passes (dead code, CSE, constant folding, fusions) on or off.

        >>> from oar.inference import Config
        >>> c = Config("m"); c.switch_ir_optim(False); c.ir_optim()
        False
        """
        self._c.switch_ir_optim(bool(x))

    def ir_optim(self):
        """Whether the graph passes run (on by default).

        >>> from oar.inference import Config
        >>> Config("m").ir_optim()
        True
        """
        return self._c.ir_optim()

    def delete_pass(self, name):
        """Leaves one graph pass out; the others still run. ``pass_names()`` lists them.

        >>> from oar.inference import Config
        >>> c = Config("m"); c.delete_pass("fuse_attention"); c.deleted_passes()
        ['fuse_attention']
        """
        if not isinstance(name, str):
            raise TypeError(f"{_api('Config.delete_pass')} name must be a str, got {type(name).__name__}")
        self._c.delete_pass(name)

    def deleted_passes(self):
        """The passes left out by ``delete_pass``, in the order given.

        >>> from oar.inference import Config
        >>> Config("m").deleted_passes()
        []
        """
        return list(self._c.deleted_passes())

    @staticmethod
    def pass_names():
        """The graph passes, in the order they run.

        >>> from oar.inference import Config
        >>> "constant_folding" in Config.pass_names()
        True
        """
        return list(_C._InferConfig.pass_names())

    def enable_memory_optim(self, x=True):
        """Turns the liveness memory planner on or off (on by default).

        >>> from oar.inference import Config
        >>> c = Config("m"); c.enable_memory_optim(False); c.memory_optim_enabled()
        False
        """
        self._c.enable_memory_optim(bool(x))

    def memory_optim_enabled(self):
        """Whether intermediate results share one planned arena.

        >>> from oar.inference import Config
        >>> Config("m").memory_optim_enabled()
        True
        """
        return self._c.memory_optim_enabled()

    def switch_winograd_conv(self, x=True):
        """Runs float32 3x3 stride-1 convolutions of 32 channels and more as
        Winograd where oneDNN has it (AVX-512), on by default: about half the
        time of the direct algorithm, with errors of the same size against an
        exact result, though not bit for bit what eager code gives. Off: the
        direct algorithm, as eager.

        >>> from oar.inference import Config
        >>> c = Config("m"); c.switch_winograd_conv(False); c.winograd_conv()
        False
        """
        self._c.switch_winograd_conv(bool(x))

    def winograd_conv(self):
        """Whether 3x3 convolutions may run as Winograd (on by default).

        >>> from oar.inference import Config
        >>> Config("m").winograd_conv()
        True
        """
        return self._c.winograd_conv()

    def enable_mkldnn_bfloat16(self):
        """Runs matrix products and convolutions in bfloat16 (outputs stay float32).

        >>> from oar.inference import Config
        >>> c = Config("m"); c.enable_mkldnn_bfloat16(); c.mkldnn_bfloat16_enabled()
        True
        """
        self._c.set_precision(int(PrecisionType.Bfloat16))

    def mkldnn_bfloat16_enabled(self):
        """Whether bfloat16 precision is on.

        >>> from oar.inference import Config
        >>> Config("m").mkldnn_bfloat16_enabled()
        False
        """
        return self._c.precision() == int(PrecisionType.Bfloat16)

    def set_precision(self, precision):
        """Sets the precision: ``PrecisionType.Float32`` or ``PrecisionType.Bfloat16``.

        >>> from oar.inference import Config, PrecisionType
        >>> c = Config("m"); c.set_precision(PrecisionType.Bfloat16); c.precision()
        <PrecisionType.Bfloat16: 3>
        """
        if isinstance(precision, str):
            names = {p.name.lower(): p for p in PrecisionType}
            names.update({"float32": PrecisionType.Float32, "bf16": PrecisionType.Bfloat16})
            if precision.lower() not in names:
                raise ValueError(f"{_api('Config.set_precision')} unknown precision {precision!r}")
            precision = names[precision.lower()]
        if not isinstance(precision, (PrecisionType, int)) or isinstance(precision, bool):
            raise TypeError(f"{_api('Config.set_precision')} expects a PrecisionType, got {type(precision).__name__}")
        # A bare int reaches the C++ config unchecked otherwise, and precision()
        # would then fail to map it back to a PrecisionType.
        if int(precision) not in {int(p) for p in PrecisionType}:
            raise ValueError(f"{_api('Config.set_precision')} unknown precision {int(precision)}; expected one of "
                             f"{[int(p) for p in PrecisionType]}")
        self._c.set_precision(int(precision))

    def precision(self):
        """The precision set (a PrecisionType).

        >>> from oar.inference import Config
        >>> Config("m").precision()
        <PrecisionType.Float32: 0>
        """
        return PrecisionType(self._c.precision())

    def enable_mkldnn(self):
        """Accepted for Paddle compatibility: the CPU kernels use oneDNN where they have it.

        >>> from oar.inference import Config
        >>> c = Config("m"); c.enable_mkldnn(); c.mkldnn_enabled()
        True
        """
        self._mkldnn = True

    def mkldnn_enabled(self):
        """Whether enable_mkldnn was called (it changes nothing).

        >>> from oar.inference import Config
        >>> Config("m").mkldnn_enabled()
        False
        """
        return self._mkldnn

    def disable_glog_info(self):
        """Accepted for Paddle compatibility: the runtime logs nothing.

        >>> from oar.inference import Config
        >>> Config("m").disable_glog_info()
        """

    def enable_xpu(self, l3_size=0xfffc00, l3_locked=False, conv_autotune=True, conv_autotune_file="",
                   transformer_encoder_precision="int16", transformer_encoder_adaptive_seqlen=False,
                   enable_multi_stream=False):
        """Raises NotImplementedError: oar has no XPU support.

        >>> from oar.inference import Config
        >>> try:
        ...     Config("m").enable_xpu()
        ... except NotImplementedError as e:
        ...     print(str(e)[:48])
        [oar.inference.Config.enable_xpu] oar has no XPU
        """
        _no_xpu("Config.enable_xpu")

    def set_xpu_config(self, config):
        """Raises NotImplementedError: oar has no XPU support.

        >>> from oar.inference import Config, XpuConfig
        >>> try:
        ...     Config("m").set_xpu_config(XpuConfig())
        ... except NotImplementedError as e:
        ...     print(str(e)[:52])
        [oar.inference.Config.set_xpu_config] oar has no XPU
        """
        if not isinstance(config, XpuConfig):
            raise TypeError(f"{_api('Config.set_xpu_config')} expects an oar.inference.XpuConfig, "
                            f"got {type(config).__name__}")
        _no_xpu("Config.set_xpu_config")

    def use_xpu(self):
        """False: oar runs on the CPU.

        >>> from oar.inference import Config
        >>> Config("m").use_xpu()
        False
        """
        return False

    def use_gpu(self):
        """False: oar's inference runtime runs on the CPU.

        >>> from oar.inference import Config
        >>> Config("m").use_gpu()
        False
        """
        return False

    def summary(self):
        """The settings as text.

        >>> from oar.inference import Config
        >>> print(Config("m").summary().splitlines()[0])
        prog_file: m.json
        """
        return "\n".join([
            f"prog_file: {self.prog_file()}",
            f"params_file: {self.params_file()}",
            f"cpu_math_library_num_threads: {self.cpu_math_library_num_threads()}",
            f"ir_optim: {self.ir_optim()}",
            f"deleted_passes: {', '.join(self.deleted_passes())}",
            f"memory_optim: {self.memory_optim_enabled()}",
            f"winograd_conv: {self.winograd_conv()}",
            f"precision: {self.precision().name}",
        ])

    def __repr__(self):
        return f"Config({self.prog_file()!r}, {self.params_file()!r})"


class Tensor:
    """A named input or output of a :class:`Predictor` (Paddle's ``paddle.inference.Tensor``).

    >>> import numpy as np, oar, os, tempfile
    >>> from oar.static import InputSpec
    >>> from oar.inference import Config, create_predictor
    >>> prefix = os.path.join(tempfile.mkdtemp(), "relu")
    >>> oar.jit.save(oar.nn.ReLU(), prefix, [InputSpec([None, 3], "float32", name="x")])
    >>> p = create_predictor(Config(prefix))
    >>> h = p.get_input_handle("x")
    >>> h.reshape([2, 3])
    >>> h.shape()
    [2, 3]
    >>> h.copy_from_cpu(np.array([[-1, 2, -3], [4, -5, 6]], dtype="float32"))
    >>> _ = p.run()
    >>> p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
    array([[0., 2., 0.],
           [4., 0., 6.]], dtype=float32)
    """

    def __init__(self, handle):
        self._h = handle

    def name(self):
        """The input's or output's name.

        >>> p = oar.inference._demo_predictor()
        >>> p.get_input_handle("x").name()
        'x'
        """
        return self._h.name()

    def shape(self):
        """The shape: of the data copied in or computed, else the saved one (-1: any size).

        >>> p = oar.inference._demo_predictor()
        >>> p.get_input_handle("x").shape()
        [-1, 3]
        """
        return self._h.shape()

    def type(self):
        """The element type (a DataType).

        >>> p = oar.inference._demo_predictor()
        >>> p.get_input_handle("x").type()
        <DataType.FLOAT32: 0>
        """
        return _TYPE_NAMES[self._h.type()]

    def reshape(self, shape):
        """Sets the shape of the next ``copy_from_cpu`` (inputs only).

        >>> p = oar.inference._demo_predictor()
        >>> h = p.get_input_handle("x")
        >>> h.reshape([5, 3])
        >>> h.shape()
        [5, 3]
        """
        if isinstance(shape, (int, np.integer)):
            shape = [shape]
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
            raise TypeError(f"{_api('Tensor.reshape')} shape must be a list of ints, got {shape!r}")
        self._h.reshape([int(d) for d in shape])

    def copy_from_cpu(self, data):
        """Copies a NumPy array in (its shape becomes the input's shape; the dtype must match).

        >>> import numpy as np
        >>> p = oar.inference._demo_predictor()
        >>> h = p.get_input_handle("x")
        >>> h.copy_from_cpu(np.zeros((2, 3), dtype="float32"))
        >>> h.shape()
        [2, 3]
        """
        if not isinstance(data, np.ndarray):
            if isinstance(data, _C.Tensor):
                data = data.numpy()
            else:
                raise TypeError(f"{_api('Tensor.copy_from_cpu')} expects a numpy.ndarray, got {type(data).__name__}")
        # (ascontiguousarray would turn a 0-D array into a 1-D one)
        self._h.copy_from_cpu(np.ascontiguousarray(data).reshape(data.shape))

    def copy_to_cpu(self):
        """The data as a new NumPy array (bfloat16 is widened to float32).

        >>> import numpy as np
        >>> p = oar.inference._demo_predictor()
        >>> p.get_input_handle("x").copy_from_cpu(np.ones((1, 3), dtype="float32"))
        >>> _ = p.run()
        >>> p.get_output_handle("out0").copy_to_cpu().shape
        (1, 2)
        """
        out = self._h.copy_to_cpu()
        if self._h.type() == "bfloat16":
            out = (out.astype(np.uint32) << 16).view(np.float32)
        return out

    def __repr__(self):
        return f"oar.inference.Tensor(name={self.name()!r}, shape={self.shape()}, type={self.type().name})"


class Predictor:
    """Runs a loaded model (Paddle's ``paddle.inference.Predictor``); made by :func:`create_predictor`.

    >>> import numpy as np, oar, os, tempfile
    >>> from oar.static import InputSpec
    >>> from oar.inference import Config, create_predictor
    >>> prefix = os.path.join(tempfile.mkdtemp(), "mlp")
    >>> net = oar.nn.Sequential(oar.nn.Linear(3, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
    >>> oar.jit.save(net, prefix, [InputSpec([None, 3], "float32", name="x")])
    >>> p = create_predictor(Config(prefix))
    >>> x = np.ones((4, 3), dtype="float32")
    >>> [y] = p.run([x])
    >>> y.shape
    (4, 2)
    >>> p2 = p.clone()  # shares the weights; use one per thread
    >>> bool(np.array_equal(p2.run([x])[0], y))
    True
    >>> sorted(p.memory_stats())[:3]
    ['intermediate_peak_bytes', 'live_lower_bound_bytes', 'memory_optim']
    """

    def __init__(self, impl, config):
        self._p = impl
        self._config = config
        # run(inputs) copies in, runs and copies out as one step, so threads
        # sharing this predictor each get their own results (Note [predictor
        # threads] in src/runtime/predictor.cpp serialises the single calls).
        self._run_lock = threading.Lock()

    def get_input_names(self):
        """The input names (the InputSpec names given to oar.jit.save when there were).

        >>> oar.inference._demo_predictor().get_input_names()
        ['x']
        """
        return list(self._p.get_input_names())

    def get_output_names(self):
        """The output names.

        >>> oar.inference._demo_predictor().get_output_names()
        ['out0']
        """
        return list(self._p.get_output_names())

    def get_input_handle(self, name):
        """The handle of input ``name``.

        >>> oar.inference._demo_predictor().get_input_handle("x")
        oar.inference.Tensor(name='x', shape=[-1, 3], type=FLOAT32)
        """
        if not isinstance(name, str):
            raise TypeError(f"{_api('Predictor.get_input_handle')} name must be a str, got {type(name).__name__}")
        return Tensor(self._p.get_input_handle(name))

    def get_output_handle(self, name):
        """The handle of output ``name``.

        >>> oar.inference._demo_predictor().get_output_handle("out0").name()
        'out0'
        """
        if not isinstance(name, str):
            raise TypeError(f"{_api('Predictor.get_output_handle')} name must be a str, got {type(name).__name__}")
        return Tensor(self._p.get_output_handle(name))

    def run(self, inputs=None):
        """Runs the model. With ``inputs`` (arrays in input order) it copies them in
        first and returns the outputs as arrays; without, it returns True.

        >>> import numpy as np
        >>> p = oar.inference._demo_predictor()
        >>> [y] = p.run([np.ones((4, 3), dtype="float32")])
        >>> y.shape
        (4, 2)
        """
        if inputs is None:
            return self._p.run()
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"{_api('Predictor.run')} inputs must be a list of arrays, got {type(inputs).__name__}")
        names = self.get_input_names()
        if len(inputs) != len(names):
            raise ValueError(f"{_api('Predictor.run')} the model takes {len(names)} input(s) {names}, "
                             f"got {len(inputs)}")
        with self._run_lock:
            for name, x in zip(names, inputs):
                self.get_input_handle(name).copy_from_cpu(x)
            self._p.run()
            return [self.get_output_handle(n).copy_to_cpu() for n in self.get_output_names()]

    def clone(self):
        """Another predictor sharing this one's weights, with its own inputs, outputs and buffers.

        >>> p = oar.inference._demo_predictor()
        >>> q = p.clone()
        >>> q._weights_id() == p._weights_id()
        True
        """
        return Predictor(self._p.clone(), self._config)

    def clear_intermediate_tensor(self):
        """Frees the buffers of intermediate results (the next run allocates them again).

        >>> oar.inference._demo_predictor().clear_intermediate_tensor()
        """
        self._p.clear_intermediate_tensor()

    def try_shrink_memory(self):
        """Frees the intermediate buffers; returns the bytes released.

        >>> import numpy as np
        >>> p = oar.inference._demo_predictor()
        >>> _ = p.run([np.ones((64, 3), dtype="float32")])
        >>> p.try_shrink_memory() > 0
        True
        """
        return self._p.try_shrink_memory()

    def memory_stats(self):
        """Bytes held, for the latest run: ``weight_bytes``; ``intermediate_peak_bytes``
        (peak of intermediate results in the latest run, in the configured mode);
        ``planned_bytes`` (the arena of the memory plan); ``unplanned_bytes`` (the same
        intermediates without the planner, each in its own buffer); ``live_lower_bound_bytes``
        (most bytes live at once: no plan needs less); ``output_bytes``; ``memory_optim``.

        >>> import numpy as np
        >>> p = oar.inference._demo_predictor()
        >>> _ = p.run([np.ones((64, 3), dtype="float32")])
        >>> s = p.memory_stats()
        >>> s["planned_bytes"] <= s["unplanned_bytes"], s["output_bytes"]
        (True, 512)
        """
        return dict(self._p.memory_stats())

    def _weights_id(self):
        """Identifies the weights in memory: equal for a predictor and its clones."""
        return self._p.weights_id()


def create_predictor(config):
    """Loads the model a :class:`Config` names and returns a :class:`Predictor`.

    Every problem with the files (missing, malformed, weights that do not
    match the program) is a ValueError naming the file.

    >>> from oar.inference import Config, create_predictor
    >>> try:
    ...     create_predictor(Config("/no/such/model"))
    ... except ValueError as e:
    ...     print(str(e).split(":")[0])
    [oar.inference.create_predictor] /no/such/model.json
    """
    if not isinstance(config, Config):
        raise TypeError(f"{_api('create_predictor')} expects an oar.inference.Config, got {type(config).__name__}")
    return Predictor(_C._InferPredictor(config._c), config)


class PredictorPool:
    """`size` predictors for one model sharing its weights (the first made by
    create_predictor, the others its clones), for one predictor per thread.

    >>> import numpy as np, oar
    >>> from oar.inference import PredictorPool
    >>> p = oar.inference._demo_predictor()
    >>> pool = PredictorPool(p._config, 2)
    >>> a, b = pool.retrieve(0), pool.retrieve(1)
    >>> a is not b and a._weights_id() == b._weights_id()
    True
    """

    def __init__(self, config, size=1):
        if not isinstance(config, Config):
            raise TypeError(f"{_api('PredictorPool')} config must be an oar.inference.Config, "
                            f"got {type(config).__name__}")
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"{_api('PredictorPool')} size must be a positive int, got {size!r}")
        first = create_predictor(config)
        self._predictors = [first] + [first.clone() for _ in range(int(size) - 1)]

    def retrieve(self, idx):
        """Predictor number `idx` (0 <= idx < size).

        >>> import oar
        >>> from oar.inference import PredictorPool
        >>> pool = PredictorPool(oar.inference._demo_predictor()._config, 1)
        >>> pool.retrieve(0).get_input_names()
        ['x']
        """
        if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
            raise TypeError(f"{_api('PredictorPool.retrieve')} idx must be an int, got {type(idx).__name__}")
        if not 0 <= idx < len(self._predictors):
            raise IndexError(f"{_api('PredictorPool.retrieve')} idx must be in [0, {len(self._predictors)}), "
                             f"got {idx}")
        return self._predictors[int(idx)]


def get_version():
    """The runtime's version string.

    >>> from oar.inference import get_version
    >>> get_version().startswith("oar")
    True
    """
    return _C._infer_version()


def _demo_predictor():
    """A predictor over a small saved model (input ``x`` [-1, 3] -> output ``out0`` [-1, 2]),
    for the examples in these docstrings.

    >>> oar.inference._demo_predictor().get_input_names()
    ['x']
    """
    import tempfile

    from ..static import InputSpec

    oar.seed(0)
    net = oar.nn.Sequential(oar.nn.Linear(3, 16), oar.nn.ReLU(), oar.nn.Linear(16, 2))
    prefix = os.path.join(tempfile.mkdtemp(prefix="oar-demo-"), "model")
    oar.jit.save(net, prefix, [InputSpec([None, 3], "float32", name="x")])
    return create_predictor(Config(prefix))
