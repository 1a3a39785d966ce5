// vmath for AVX2 + FMA (this file is compiled with -mavx2 -mfma -mf16c; see CMakeLists.txt).
#define OAR_VF __m256
#define OAR_VD __m256d
#define OAR_WF 8
#define OAR_WD 4
#define OAR_PS(op) _mm256_##op##_ps
#define OAR_PD(op) _mm256_##op##_pd
#define OAR_SLEEF_F(fn) Sleef_##fn##f8_u10avx2
#define OAR_SLEEF_D(fn) Sleef_##fn##d4_u10avx2
#define OAR_SELECT_LT_PS(a, b, x, y) _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define OAR_SLEEF_F35(fn) Sleef_##fn##f8_u35avx2
#define OAR_RCP_PS(a) _mm256_rcp_ps(a)
#define OAR_ROUND_PS(a) _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define OAR_LDEXP_PS(p, n) oar_ldexp_avx2(p, n)
#include <immintrin.h>
// p * 2^n for integral n in [-150, 129]: two factors 2^(n/2) that are both
// normal floats, so the product overflows to inf and underflows gradually.
static inline __m256 oar_ldexp_avx2(__m256 p, __m256 n) {
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256i bias = _mm256_set1_epi32(127);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}
#define OAR_IVEC __m256i
#define OAR_SI(op) _mm256_##op##_si256
#define OAR_EPI32(op) _mm256_##op##_epi32
#define OAR_PS_CAST(v) _mm256_castsi256_ps(v)
#define OAR_BLEND_NAN(f, r, nan) \
  _mm256_blendv_epi8(r, nan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
// 8 x 32-bit -> 8 x 16-bit (values fit: the shift left 16 significant bits)
#define OAR_STORE_NARROW(p, v)                                                                 \
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),                                              \
                   _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)))
#define OAR_LOAD_WIDEN(p) _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
#define OAR_STORE_F16(p, v) \
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define OAR_LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
#define OAR_TABLE_FN table_avx2
#define OAR_ISA_NAME "avx2"
#include "kernels/cpu/vmath_isa.inc"
