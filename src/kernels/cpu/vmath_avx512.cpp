// vmath for AVX-512 (this file is compiled with -mavx512f -mavx512dq; see CMakeLists.txt).
#define OAR_VF __m512
#define OAR_VD __m512d
#define OAR_WF 16
#define OAR_WD 8
#define OAR_PS(op) _mm512_##op##_ps
#define OAR_PD(op) _mm512_##op##_pd
#define OAR_SLEEF_F(fn) Sleef_##fn##f16_u10avx512f
#define OAR_SLEEF_D(fn) Sleef_##fn##d8_u10avx512f
#define OAR_SELECT_LT_PS(a, b, x, y) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x)
#define OAR_SLEEF_F35(fn) Sleef_##fn##f16_u35avx512f
#define OAR_RCP_PS(a) _mm512_rcp14_ps(a)
#define OAR_ROUND_PS(a) _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
// p * 2^n for integral n, with overflow to inf and gradual underflow
#define OAR_LDEXP_PS(p, n) _mm512_scalef_ps(p, n)
#define OAR_IVEC __m512i
#define OAR_SI(op) _mm512_##op##_si512
#define OAR_EPI32(op) _mm512_##op##_epi32
#define OAR_PS_CAST(v) _mm512_castsi512_ps(v)
#define OAR_BLEND_NAN(f, r, nan) _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), r, nan)
#define OAR_STORE_NARROW(p, v) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v))
#define OAR_LOAD_WIDEN(p) _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))
#define OAR_STORE_F16(p, v) \
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define OAR_LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))
#define OAR_TABLE_FN table_avx512
#define OAR_ISA_NAME "avx512"
#include "kernels/cpu/vmath_isa.inc"
