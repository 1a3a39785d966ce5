// vmath for AVX2 + FMA (this file is compiled with -mavx2 -mfma; see CMakeLists.txt).
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
#define OAR_TABLE_FN table_avx2
#define OAR_ISA_NAME "avx2"
#include "kernels/cpu/vmath_isa.inc"
