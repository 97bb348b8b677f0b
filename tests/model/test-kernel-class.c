/* test-kernel-class.c — kernel classes from names (sim/model/kernel-class.c)
 * on the names of real traces: the Kineto files of validation/data/kineto
 * (through zlib + cJSON) and, when given, the optional nsys export (through
 * SQL; validation/data/README.md). */
#include <glib.h>
#include <string.h>
#include <zlib.h>
#include <sqlite3.h>
#include <cjson/cJSON.h>

#include "model/kernel-class.h"
#include "test-data.h"

typedef struct {
  const char *name;
  VsKernelClass cls;
  VsPrecision prec;
} Case;

/* Names copied from the real traces (shortened after the part that
 * decides), and from the libraries' published naming for the precisions
 * the traces lack. */
static const Case cases[] = {
  /* memory-profile-v100, ns-resolution-rank0 (V100) */
  { "volta_sgemm_128x64_nn", VS_KCLASS_GEMM_SIMT, VS_PREC_FP32 },
  { "volta_sgemm_32x32_sliced1x4_nt", VS_KCLASS_GEMM_SIMT, VS_PREC_FP32 },
  { "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", VS_KCLASS_COMM, VS_PREC_FP32 },
  { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  { "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float>>>",
    VS_KCLASS_REDUCE, VS_PREC_FP32 },
  { "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::WelfordOps<float, float, int>>>",
    VS_KCLASS_NORM, VS_PREC_FP32 },
  { "void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t)",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  { "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", VS_KCLASS_CONV, VS_PREC_FP32 },
  { "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float)", VS_KCLASS_NORM, VS_PREC_FP32 },
  { "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*)", VS_KCLASS_CONV,
    VS_PREC_FP32 },
  { "void wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*)", VS_KCLASS_CONV,
    VS_PREC_FP32 },
  { "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops)",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  { "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*)", VS_KCLASS_SOFTMAX,
    VS_PREC_FP32 },
  { "void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasSplitKParams<float>)",
    VS_KCLASS_REDUCE, VS_PREC_FP32 },
  { "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  /* alexnet-a100, copies-rank0, trace-diff-control, sampled-rank0 (A100) */
  { "ampere_sgemm_32x32_sliced1x4_tn", VS_KCLASS_GEMM_SIMT, VS_PREC_FP32 },
  { "ampere_gcgemm_64x64_nt", VS_KCLASS_GEMM_SIMT, VS_PREC_FP32 },
  { "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
    VS_KCLASS_CONV, VS_PREC_TF32 },
  { "void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*)", VS_KCLASS_CONV, VS_PREC_FP32 },
  { "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(cutlass_80_tensorop_s1688gemm)",
    VS_KCLASS_GEMM_TENSOR, VS_PREC_TF32 },
  { "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", VS_KCLASS_COMM, VS_PREC_INT8 },
  { "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float>", VS_KCLASS_ELEMENTWISE,
    VS_PREC_FP32 },
  { "triton__0d1d2d3d4d5d6d7d8d9d10d11d12d13d14", VS_KCLASS_ELEMENTWISE, VS_PREC_NONE },
  { "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*)",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  { "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800>",
    VS_KCLASS_REDUCE, VS_PREC_NONE },
  { "void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, false, long>",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP16 },
  { "void fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_cuda_kernel<float>(float const*)",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP8 },
  { "void cask_cudnn::computeOffsetsKernel<false, false>(cask_cudnn::ComputeOffsetsParams)", VS_KCLASS_OTHER,
    VS_PREC_NONE },
  /* rtx3090-small.sqlite (TensorRT) */
  { "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize256x64x32_stage3", VS_KCLASS_CONV,
    VS_PREC_FP16 },
  { "trt_ampere_h16816gemm_64x64_ldg8_relu_stages_64x5_tn_v1", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP16 },
  { "sm50_xmma_pooling_coalescedC_NHWC_kMAX_3_False_execute_kernel_trt", VS_KCLASS_ELEMENTWISE, VS_PREC_NONE },
  /* published naming, precisions the traces lack */
  { "volta_h884gemm_256x128_ldg8_nn", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP16 },
  { "ampere_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP16 },
  { "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", VS_KCLASS_GEMM_TENSOR, VS_PREC_BF16 },
  { "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP8 },
  { "void cutlass::Kernel<cutlass_80_tensorop_i16832gemm_s8_256x128_64x3_tn_align16>", VS_KCLASS_GEMM_TENSOR,
    VS_PREC_INT8 },
  { "turing_imma_int8_gemm", VS_KCLASS_GEMM_TENSOR, VS_PREC_INT8 },
  /* i8816 alone (cuBLAS's Turing/Ampere INT8 tensor-core tile token; no
   * "int8" or "imma" beside it to carry the answer). */
  { "ampere_i8816gemm_interleaved_256x128_64x3_nt", VS_KCLASS_GEMM_TENSOR, VS_PREC_INT8 },
  { "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP16 },
  { "nvjet_tst_128x64_64x8_2x1_v_bz_TNT", VS_KCLASS_GEMM_TENSOR, VS_PREC_TF32 },
  { "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", VS_KCLASS_GEMM_TENSOR, VS_PREC_FP16 },
  { "Cijk_Alik_Bljk_BBS_BH_MT64x64x64", VS_KCLASS_GEMM_TENSOR, VS_PREC_BF16 },
  { "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>",
    VS_KCLASS_ATTENTION, VS_PREC_BF16 },
  { "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t>)",
    VS_KCLASS_ATTENTION, VS_PREC_FP16 },
  { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>", VS_KCLASS_NORM,
    VS_PREC_BF16 },
  { "void rmsnorm_twoPassAlgo_e8<__nv_bfloat16>", VS_KCLASS_NORM, VS_PREC_BF16 },
  { "void rmsnorm_kernel<128>", VS_KCLASS_NORM, VS_PREC_NONE },
  { "rcclKernel_AllReduce_RING_LL_Sum_bf16", VS_KCLASS_COMM, VS_PREC_BF16 },
  { "dgemm_kernel", VS_KCLASS_GEMM_SIMT, VS_PREC_FP64 },
  { "gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false>", VS_KCLASS_REDUCE, VS_PREC_FP32 },
  { "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda, convert_float_double>",
    VS_KCLASS_ELEMENTWISE, VS_PREC_FP32 },
  { "my_custom_thing", VS_KCLASS_OTHER, VS_PREC_NONE },
  /* a bare "gemm": tensor cores, unless FP32 or FP64 is stated */
  { "fwd_gemm_1", VS_KCLASS_GEMM_TENSOR, VS_PREC_NONE },
  { "void gemm_kernel<float, 128>(float const*)", VS_KCLASS_GEMM_SIMT, VS_PREC_FP32 },
  { "void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int, int)", VS_KCLASS_ELEMENTWISE, VS_PREC_NONE },
  { "adam_step", VS_KCLASS_ELEMENTWISE, VS_PREC_NONE },
};

static void
test_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      VsKernelKind k = kernel_class_of (cases[i].name);
      if (k.cls != cases[i].cls || k.precision != cases[i].prec)
        g_error ("%s: got %s/%s, want %s/%s", cases[i].name, kernel_class_name (k.cls),
                 event_precision_name (k.precision), kernel_class_name (cases[i].cls),
                 event_precision_name (cases[i].prec));
    }
  g_assert_cmpint (kernel_class_of (NULL).cls, ==, VS_KCLASS_OTHER);
  g_assert_cmpstr (kernel_class_name (VS_KCLASS_COMM), ==, "communication");
  g_assert_null (kernel_class_name (VS_KCLASS_COUNT));
  g_assert_true (kernel_class_memory_bound (VS_KCLASS_SOFTMAX));
  g_assert_false (kernel_class_memory_bound (VS_KCLASS_GEMM_TENSOR));
}


/* Captured kernel time per class in a Kineto file (us, as the file has it). */
static void
kineto_mix (const char *path, double dur[VS_KCLASS_COUNT], guint count[VS_KCLASS_COUNT])
{
  gzFile z = gzopen (path, "rb");
  g_assert_nonnull (z);
  GString *s = g_string_new (NULL);
  char buf[1 << 16];
  int n;
  while ((n = gzread (z, buf, sizeof buf)) > 0)
    g_string_append_len (s, buf, n);
  gzclose (z);
  cJSON *root = cJSON_Parse (s->str);
  g_string_free (s, TRUE);
  g_assert_nonnull (root);
  const cJSON *evs = cJSON_GetObjectItem (root, "traceEvents"), *e;
  memset (dur, 0, sizeof (double) * VS_KCLASS_COUNT);
  memset (count, 0, sizeof (guint) * VS_KCLASS_COUNT);
  cJSON_ArrayForEach (e, evs)
    {
      const cJSON *cat = cJSON_GetObjectItem (e, "cat");
      if (!cJSON_IsString (cat) || strcmp (cat->valuestring, "kernel") != 0)
        continue;
      VsKernelKind k = kernel_class_of (cJSON_GetObjectItem (e, "name")->valuestring);
      dur[k.cls] += cJSON_GetObjectItem (e, "dur")->valuedouble;
      count[k.cls]++;
    }
  cJSON_Delete (root);
}

static void
test_real_kineto (void)
{
  g_autofree char *v100 = test_data ("kineto/memory-profile-v100.json.gz");
  g_autofree char *a100 = test_data ("kineto/alexnet-a100.json.gz");
  if (v100 == NULL || a100 == NULL)
    return;
  double dur[VS_KCLASS_COUNT], total = 0;
  guint count[VS_KCLASS_COUNT];
  /* V100 training step: 2,645 volta_sgemm kernels (400.2 ms), 2,020
   * NCCL all-reduces (357.3 ms), and nothing unclassified. */
  kineto_mix (v100, dur, count);
  for (guint c = 0; c < VS_KCLASS_COUNT; c++)
    total += dur[c];
  g_assert_cmpuint (count[VS_KCLASS_GEMM_SIMT], ==, 2645);
  g_assert_cmpfloat_with_epsilon (dur[VS_KCLASS_GEMM_SIMT], 400184, 1);
  g_assert_cmpuint (count[VS_KCLASS_COMM], ==, 2020);
  g_assert_cmpfloat_with_epsilon (dur[VS_KCLASS_COMM], 357343, 1);
  g_assert_cmpuint (count[VS_KCLASS_OTHER], ==, 0);
  g_assert_cmpfloat_with_epsilon (total, 977859, 1);
  /* AlexNet on an A100: cuDNN convolutions (14, 4.44 ms), sgemm (8),
   * two cask offset kernels (8 us) the only unclassified ones. */
  kineto_mix (a100, dur, count);
  g_assert_cmpuint (count[VS_KCLASS_CONV], ==, 14);
  g_assert_cmpfloat_with_epsilon (dur[VS_KCLASS_CONV], 4440, 1);
  g_assert_cmpuint (count[VS_KCLASS_GEMM_SIMT], ==, 8);
  g_assert_cmpuint (count[VS_KCLASS_OTHER], ==, 2);
  g_assert_cmpfloat (dur[VS_KCLASS_OTHER], ==, 8);
}

static void
test_real_nsys (void)
{
  g_autofree char *path = test_optional_trace ("nsys/rtx3090-small.sqlite");
  if (path == NULL)
    return;
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                       "JOIN StringIds s ON s.id = k.demangledName", -1, &st, NULL), ==, SQLITE_OK);
  guint count[VS_KCLASS_COUNT] = { 0 }, fp16 = 0;
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      VsKernelKind k = kernel_class_of ((const char *) sqlite3_column_text (st, 0));
      count[k.cls]++;
      fp16 += k.precision == VS_PREC_FP16;
    }
  sqlite3_finalize (st);
  sqlite3_close (db);
  /* TensorRT ResNet-style FP16 inference: 20 implicit-GEMM convolutions,
   * one h16816 GEMM, 15 reformat / pooling / permutation kernels. */
  g_assert_cmpuint (count[VS_KCLASS_CONV], ==, 20);
  g_assert_cmpuint (count[VS_KCLASS_GEMM_TENSOR], ==, 1);
  g_assert_cmpuint (count[VS_KCLASS_ELEMENTWISE], ==, 15);
  g_assert_cmpuint (count[VS_KCLASS_OTHER], ==, 0);
  g_assert_cmpuint (fp16, >=, 21);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-class/table", test_table);
  g_test_add_func ("/kernel-class/real-kineto", test_real_kineto);
  g_test_add_func ("/kernel-class/real-nsys", test_real_nsys);
  return g_test_run ();
}
