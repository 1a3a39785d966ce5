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
#define OAR_TABLE_FN table_avx512
#define OAR_ISA_NAME "avx512"
#include "kernels/cpu/vmath_isa.inc"
