// Special functions without a standard-library version.
#pragma once
#include <cmath>

#include "base/hd.h"
#include <limits>
#include <numbers>

namespace oar::cpu {

// Inverse error function: a rational first guess refined by Newton steps on erf.
template <typename T> OAR_HD T erfinv(T y) {
  if (std::isnan(y) || y < T(-1) || y > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (y == T(1)) return std::numeric_limits<T>::infinity();
  if (y == T(-1)) return -std::numeric_limits<T>::infinity();
  double w = -std::log((1.0 - double(y)) * (1.0 + double(y)));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
    x = p * double(y);
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
    x = p * double(y);
  }
  const double k = 2.0 / std::sqrt(std::numbers::pi);
  for (int i = 0; i < 2; ++i) {
    double err = std::erf(x) - double(y);
    x -= err / (k * std::exp(-x * x));
  }
  return T(x);
}

template <typename T> OAR_HD T digamma(T xin) {
  double x = double(xin);
  if (std::isnan(x)) return T(x);
  if (x == 0) return T(std::copysign(std::numeric_limits<double>::infinity(), -x));
  if (x < 0 && x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
  double result = 0;
  if (x < 0) {  // reflection: psi(1-x) - psi(x) = pi cot(pi x)
    result = -std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1 - x;
  }
  while (x < 6) { result -= 1 / x; x += 1; }
  double f = 1 / (x * x);
  double series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
  return T(result + std::log(x) - 0.5 / x - series);
}

template <typename T> OAR_HD T trigamma(T xin) {
  double x = double(xin);
  if (std::isnan(x)) return T(x);
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<T>::infinity();
  double result = 0;
  if (x < 0) {  // reflection: psi1(1-x) + psi1(x) = pi^2 / sin^2(pi x)
    double s = std::sin(std::numbers::pi * x);
    double r = std::numbers::pi * std::numbers::pi / (s * s);
    return T(r - double(trigamma(1 - x)));
  }
  while (x < 6) { result += 1 / (x * x); x += 1; }
  double f = 1 / (x * x);
  double series = 1 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30))));
  return T(result + series);
}

}  // namespace oar::cpu
