// Times the CPU FFT libraries oar could ship with, on one thread: oneMKL's
// DFTI and KissFFT (its C++ template, kissfft.hh, which gives float and
// double alike; Debian's libkissfft builds only float). pocketfft, the
// library inside NumPy and SciPy, is timed through them by
// benchmarks/fft_pocketfft.py, which prints rows of the same table.
//
// Build and run (MKL from the project's .venv, KissFFT from libkissfft-dev):
//   g++ -O2 -std=c++20 -march=x86-64-v3 benchmarks/fft_libs.cpp -I.venv/include \
//       .venv/lib/libmkl_intel_lp64.so.3 .venv/lib/libmkl_sequential.so.3 .venv/lib/libmkl_core.so.3 \
//       -Wl,-rpath,$PWD/.venv/lib -o /tmp/fft_libs && /tmp/fft_libs
//
// Each case prints the median over repeats of one transform's time in
// microseconds. Cases: c2c and r2c forward transforms of sizes that are
// powers of two, primes and composites, a batch of 1-D transforms, a 2-D and
// a 3-D transform.
#include <mkl_dfti.h>
#include <mkl_service.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <kissfft/kissfft.hh>

namespace {

double median_us(const std::function<void()>& f) {
  f();  // warm-up (plans, caches)
  // Enough repeats for about 0.2 s, at least 5.
  auto t0 = std::chrono::steady_clock::now();
  f();
  double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int reps = std::max(5, static_cast<int>(0.2 / std::max(once, 1e-7)));
  reps = std::min(reps, 20000);
  std::vector<double> ts;
  ts.reserve(reps);
  for (int r = 0; r < reps; ++r) {
    auto a = std::chrono::steady_clock::now();
    f();
    ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(ts.begin(), ts.begin() + ts.size() / 2, ts.end());
  return ts[ts.size() / 2];
}

struct Case {
  std::string name;
  std::vector<MKL_LONG> dims;  // transform dims
  MKL_LONG batch = 1;
};

template <typename R>
double mkl_time(const Case& c, bool real) {
  using C = std::complex<R>;
  MKL_LONG n = 1;
  for (auto d : c.dims) n *= d;
  MKL_LONG last = c.dims.back(), half = last / 2 + 1;
  MKL_LONG nout = real ? n / last * half : n;
  std::vector<C> in(n * c.batch), out(nout * c.batch);
  std::vector<R> rin(n * c.batch);
  std::mt19937 g(0);
  std::normal_distribution<R> d;
  for (auto& v : in) v = C(d(g), d(g));
  for (auto& v : rin) v = d(g);
  DFTI_DESCRIPTOR_HANDLE h = nullptr;
  auto prec = sizeof(R) == 4 ? DFTI_SINGLE : DFTI_DOUBLE;
  auto dom = real ? DFTI_REAL : DFTI_COMPLEX;
  if (c.dims.size() == 1)
    DftiCreateDescriptor(&h, prec, dom, 1, c.dims[0]);
  else
    DftiCreateDescriptor(&h, prec, dom, static_cast<MKL_LONG>(c.dims.size()), c.dims.data());
  DftiSetValue(h, DFTI_PLACEMENT, DFTI_NOT_INPLACE);
  DftiSetValue(h, DFTI_THREAD_LIMIT, 1);
  if (real) {
    DftiSetValue(h, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX);
    // Row-major strides of the real input and the half-spectrum output.
    std::vector<MKL_LONG> is(c.dims.size() + 1), os(c.dims.size() + 1);
    is[0] = os[0] = 0;
    MKL_LONG si = 1, so = 1;
    for (size_t k = c.dims.size(); k-- > 0;) {
      is[k + 1] = si;
      os[k + 1] = so;
      si *= c.dims[k];
      so *= k + 1 == c.dims.size() ? half : c.dims[k];
    }
    DftiSetValue(h, DFTI_FWD_STRIDES, is.data());
    DftiSetValue(h, DFTI_BWD_STRIDES, os.data());
  }
  if (c.batch > 1) {
    DftiSetValue(h, DFTI_NUMBER_OF_TRANSFORMS, c.batch);
    DftiSetValue(h, DFTI_FWD_DISTANCE, n);
    DftiSetValue(h, DFTI_BWD_DISTANCE, nout);
  }
  if (DftiCommitDescriptor(h) != 0) return -1;
  double t = real ? median_us([&] { DftiComputeForward(h, rin.data(), out.data()); })
                  : median_us([&] { DftiComputeForward(h, in.data(), out.data()); });
  DftiFreeDescriptor(&h);
  return t;
}

// One transform over each axis in turn, gathering the strided lines into a
// contiguous buffer (KissFFT has no strided multi-dimensional plan in C++).
template <typename R>
double kiss_time(const Case& c, bool real) {
  using C = std::complex<R>;
  size_t n = 1;
  for (auto d : c.dims) n *= d;
  std::vector<C> in(n * c.batch), out(n * c.batch);
  std::vector<R> rin(n * c.batch);
  std::mt19937 g(0);
  std::normal_distribution<R> d;
  for (auto& v : in) v = C(d(g), d(g));
  for (auto& v : rin) v = d(g);
  std::vector<kissfft<R>> plans;
  for (auto k : c.dims) plans.emplace_back(static_cast<size_t>(k), false);
  size_t last = c.dims.back();
  // transform_real needs an even length; odd lengths go through c2c.
  bool real_path = real && last % 2 == 0;
  kissfft<R> half_plan(real_path ? last / 2 : 1, false);
  std::vector<C> line, line_out;
  auto run = [&] {
    for (MKL_LONG b = 0; b < c.batch; ++b) {
      C* o = out.data() + b * n;
      // last axis: contiguous lines
      for (size_t r = 0; r < n / last; ++r) {
        if (real_path) {
          half_plan.transform_real(rin.data() + b * n + r * last, o + r * last);
        } else if (real) {
          line.assign(last, C());
          for (size_t i = 0; i < last; ++i) line[i] = rin[b * n + r * last + i];
          plans.back().transform(line.data(), o + r * last);
        } else {
          plans.back().transform(in.data() + b * n + r * last, o + r * last);
        }
      }
      // the other axes, in place through a gathered line
      size_t inner = last;
      for (size_t k = c.dims.size() - 1; k-- > 0;) {
        size_t len = c.dims[k], outer = n / (len * inner);
        // r2c keeps only the half spectrum of the last axis for the others.
        size_t cols = real ? last / 2 + 1 : last;
        line.resize(len);
        line_out.resize(len);
        for (size_t a = 0; a < outer; ++a)
          for (size_t i = 0; i < inner; ++i) {
            if (real && i % last >= cols) continue;
            C* base = o + a * len * inner + i;
            for (size_t j = 0; j < len; ++j) line[j] = base[j * inner];
            plans[k].transform(line.data(), line_out.data());
            for (size_t j = 0; j < len; ++j) base[j * inner] = line_out[j];
          }
        inner *= len;
      }
    }
  };
  return median_us(run);
}

}  // namespace

int main() {
  mkl_set_num_threads(1);
  std::vector<Case> cases = {
      {"1024", {1024}},           {"4096", {4096}},         {"1009 (prime)", {1009}},
      {"4099 (prime)", {4099}},   {"1000", {1000}},         {"1536", {1536}},
      {"256 x 1024 batch", {1024}, 256}, {"512x512 (2-D)", {512, 512}}, {"64^3 (3-D)", {64, 64, 64}},
  };
  std::printf("| case | kind | dtype | MKL us | KissFFT us | KissFFT/MKL |\n|---|---|---|---|---|---|\n");
  for (const auto& c : cases)
    for (bool real : {false, true})
      for (int dbl = 0; dbl < 2; ++dbl) {
        double m = dbl ? mkl_time<double>(c, real) : mkl_time<float>(c, real);
        double k = dbl ? kiss_time<double>(c, real) : kiss_time<float>(c, real);
        std::printf("| %s | %s | %s | %.2f | %.2f | %.1fx |\n", c.name.c_str(), real ? "r2c" : "c2c",
                    dbl ? "float64" : "float32", m, k, k / m);
        std::fflush(stdout);
      }
}
