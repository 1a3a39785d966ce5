// Docstrings, with runnable examples (doctests), of the runtime functions bound
// in ops.cpp (the declared ops' and functions' are generated from src/ops/*.toml).
#pragma once

namespace oar::bind::docs {

inline constexpr const char* set_num_threads = R"(Sets how many threads oar's CPU kernels use.

>>> import oar
>>> n = oar.get_num_threads()
>>> oar.set_num_threads(1)
>>> oar.get_num_threads()
1
>>> oar.set_num_threads(n)
)";

inline constexpr const char* get_num_threads = R"(How many threads oar's CPU kernels use.

>>> import oar
>>> oar.get_num_threads() >= 1
True
)";

}  // namespace oar::bind::docs
