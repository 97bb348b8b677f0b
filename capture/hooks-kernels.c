/* hooks-kernels.c — hook mode's kernels: names and parameter layouts,
 * cached per function, read for every launch (and for CUPTI mode:
 * hooks_kernel_words), and the launch wrappers. See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- kernels: names and parameter layouts, cached per function ---- */

/* Open addressing on f, of entries allocated one by one: a launch uses its
 * FuncInfo after the lock is released, so growing the table must not move
 * them (it moved the entries themselves before, which another thread could
 * still be reading). */
static FuncInfo **g_funcs;
static size_t g_funcs_cap, g_funcs_n;
static pthread_mutex_t g_funcs_lock = PTHREAD_MUTEX_INITIALIZER;

static char *
demangle (const char *name)
{
  typedef char *(*Demangle) (const char *, char *, size_t *, int *);
  static Demangle dm;
  static int looked;
  if (!looked) {
    dm = (Demangle) cap_real_dlsym (RTLD_DEFAULT, "__cxa_demangle");
    looked = 1;
  }
  if (!dm || strncmp (name, "_Z", 2) != 0)
    return NULL;
  int st = 0;
  char *r = dm (name, NULL, NULL, &st);
  if (st != 0) {
    free (r);
    return NULL;
  }
  return r;
}

static void
func_layout (FuncInfo *fi)
{
  fi->n = -1;
  int use_kernel = 0;
  size_t off, size;
  CUresult r = real_cuFuncGetParamInfo ? real_cuFuncGetParamInfo (fi->f, 0, &off, &size)
                                       : CUDA_ERROR_NOT_FOUND;
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE && real_cuKernelGetParamInfo) {
    r = real_cuKernelGetParamInfo ((CUkernel) fi->f, 0, &off, &size);
    use_kernel = 1;
  }
  if (r == CUDA_ERROR_INVALID_VALUE) {
    fi->n = 0;                  /* no parameters */
    return;
  }
  if (r != CUDA_SUCCESS)
    return;
  size_t cap = 16;
  fi->off = malloc (cap * sizeof *fi->off);
  fi->size = malloc (cap * sizeof *fi->size);
  int n = 0;
  while (r == CUDA_SUCCESS && fi->off && fi->size && n < 4096) {
    if ((size_t) n == cap) {
      cap *= 2;
      uint32_t *a = realloc (fi->off, cap * sizeof *a);
      if (a)
        fi->off = a;
      uint32_t *b = realloc (fi->size, cap * sizeof *b);
      if (b)
        fi->size = b;
      if (!a || !b)
        break;
    }
    fi->off[n] = (uint32_t) off;
    fi->size[n] = (uint32_t) size;
    n++;
    r = use_kernel ? real_cuKernelGetParamInfo ((CUkernel) fi->f, (size_t) n, &off, &size)
                   : real_cuFuncGetParamInfo (fi->f, (size_t) n, &off, &size);
  }
  fi->n = n;
}

/* What the launch does not say (SPEC 3 `regs`, and the static part of
 * `smem`), from the driver: CU_FUNC_ATTRIBUTE_NUM_REGS and
 * CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, as CUPTI's kernel records carry
 * them (registersPerThread, staticSharedMemory). A launch may name a
 * CUkernel (CUDA 12's context-independent handle) instead of a function:
 * cuFuncGetAttribute refuses it, and cuKernelGetFunction gives the
 * current context's function. A refusal leaves the fields unknown; the
 * launch itself is never touched. */
static void
func_attrs (FuncInfo *fi)
{
  fi->regs = 0;
  fi->smem = -1;
  if (!real_cuFuncGetAttribute)
    return;
  CUfunction g = fi->f;
  int regs = 0, smem = 0;
  CUresult r = real_cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g);
  if (r != CUDA_SUCCESS && real_cuKernelGetFunction
      && real_cuKernelGetFunction (&g, (CUkernel) fi->f) == CUDA_SUCCESS && g)
    r = real_cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, g);
  if (r != CUDA_SUCCESS)
    return;
  fi->regs = regs > 0 ? (uint32_t) regs : 0;
  if (real_cuFuncGetAttribute (&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, g) == CUDA_SUCCESS
      && smem >= 0)
    fi->smem = smem;
}

FuncInfo *
func_info (CUfunction f)
{
  pthread_mutex_lock (&g_funcs_lock);
  if (g_funcs_n * 2 >= g_funcs_cap) {
    size_t nc = g_funcs_cap ? g_funcs_cap * 2 : 256;
    FuncInfo **nf = calloc (nc, sizeof *nf);
    if (!nf) {
      pthread_mutex_unlock (&g_funcs_lock);
      return NULL;
    }
    for (size_t i = 0; i < g_funcs_cap; i++)
      if (g_funcs[i]) {
        size_t j = ((uintptr_t) g_funcs[i]->f * 0x9E3779B97F4A7C15ull >> 20) & (nc - 1);
        while (nf[j])
          j = (j + 1) & (nc - 1);
        nf[j] = g_funcs[i];
      }
    free (g_funcs);
    g_funcs = nf;
    g_funcs_cap = nc;
  }
  size_t j = ((uintptr_t) f * 0x9E3779B97F4A7C15ull >> 20) & (g_funcs_cap - 1);
  while (g_funcs[j] && g_funcs[j]->f != f)
    j = (j + 1) & (g_funcs_cap - 1);
  FuncInfo *fi = g_funcs[j];
  if (!fi && (fi = calloc (1, sizeof *fi)) != NULL) {
    g_funcs[j] = fi;
    fi->f = f;
    g_funcs_n++;
    const char *name = NULL;
    if (!real_cuFuncGetName || real_cuFuncGetName (&name, f) != CUDA_SUCCESS || !name) {
      name = NULL;
      if (real_cuKernelGetName && real_cuKernelGetName (&name, (CUkernel) f) != CUDA_SUCCESS)
        name = NULL;
    }
    char *dm = name ? demangle (name) : NULL;
    fi->sid = cap_intern (dm ? dm : name ? name : "unknown");
    free (dm);
    func_layout (fi);
    func_attrs (fi);
  }
  pthread_mutex_unlock (&g_funcs_lock);
  return fi;
}

/* Collects the pointer-sized words of a launch's parameters into W. */
size_t
param_words (const FuncInfo *fi, void **params, void **extra, uint64_t *w)
{
  size_t n = 0;
  if (params && fi && fi->n > 0) {
    for (int i = 0; i < fi->n && n < MAX_WORDS; i++) {
      const char *v = params[i];
      if (!v)
        continue;
      for (uint32_t k = 0; k + 8 <= fi->size[i] && n < MAX_WORDS; k += 8)
        memcpy (&w[n++], v + k, 8);
    }
    return n;
  }
  if (!params && extra) {
    const char *buf = NULL;
    size_t len = 0;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        buf = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
        len = *(size_t *) extra[i + 1];
    }
    if (!buf)
      return 0;
    if (fi && fi->n > 0) {
      for (int i = 0; i < fi->n && n < MAX_WORDS; i++)
        for (uint32_t k = 0; k + 8 <= fi->size[i] && fi->off[i] + k + 8 <= len && n < MAX_WORDS; k += 8)
          memcpy (&w[n++], buf + fi->off[i] + k, 8);
    } else {
      for (size_t k = 0; k + 8 <= len && n < MAX_WORDS; k += 8)
        memcpy (&w[n++], buf + k, 8);
    }
  }
  return n;
}

/* SH in: the launch's grid, block and dynamic shared memory (smem); out:
 * FI's registers and static + dynamic shared memory (0 where unknown:
 * dynamic memory alone would understate what a block holds). */
CapShape *
launch_shape (const FuncInfo *fi, CapShape *sh)
{
  uint64_t smem = fi && fi->smem >= 0 ? (uint64_t) fi->smem + sh->smem : 0;
  sh->regs = fi ? fi->regs : 0;
  sh->smem = smem <= UINT32_MAX ? (uint32_t) smem : 0;
  return sh;
}

uint32_t
hooks_kernel_words (void *f, void **params, void **extra, uint64_t *words, size_t *nw,
                    CapShape *shape)
{
  resolve ();
  FuncInfo *fi = func_info ((CUfunction) f);
  *nw = param_words (fi, params, extra, words);
  if (shape)
    launch_shape (fi, shape);
  return fi ? fi->sid : cap_intern ("unknown");
}

/* ---- launches ---- */

#define CFG_DIMS(c) \
  ((c) ? DIMS ((c)->gridDimX, (c)->gridDimY, (c)->gridDimZ, (c)->blockDimX, (c)->blockDimY, \
               (c)->blockDimZ, (c)->sharedMemBytes) \
       : DIMS (0, 0, 0, 0, 0, 0, 0))

/* SHAPE: the launch's CapShape initializer, grid, block and dynamic
 * shared memory (launch_shape adds what the function says). */
#define LAUNCH(call, f, s, params, extra, shape) \
  do { \
    if (capturing (s)) \
      return call; \
    uint64_t t0 = cap_now (); \
    FuncInfo *fi = func_info (f); \
    uint64_t words[MAX_WORDS]; \
    size_t nw = param_words (fi, params, extra, words); \
    CapShape sh = shape; \
    Timer tm; \
    timer_begin (&tm, s); \
    CUresult r = call; \
    timer_stop (&tm, s); \
    uint64_t t1 = cap_now (); \
    if (r != CUDA_SUCCESS) { \
      timer_cancel (&tm); \
      return r; \
    } \
    uint64_t seq = cap_kernel (t0, t1, fi ? fi->sid : cap_intern ("unknown"), (uintptr_t) (s), \
                               words, nw, tm.ok, 0, launch_shape (fi, &sh)); \
    timer_commit (&tm, seq, 1); \
    return r; \
  } while (0)

CUresult
cuLaunchKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                CUstream s, void **params, void **extra)
{
  PASS (cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
  LAUNCH (real_cuLaunchKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra), f, s, params, extra,
          DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchCooperativeKernel (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                           unsigned int bx, unsigned int by, unsigned int bz,
                           unsigned int shmem, CUstream s, void **params)
{
  PASS (cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, shmem, s, params);
  LAUNCH (real_cuLaunchCooperativeKernel (f, gx, gy, gz, bx, by, bz, shmem, s, params), f, s,
          params, NULL, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchKernelEx (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
  PASS (cuLaunchKernelEx, cfg, f, params, extra);
  CUstream s = cfg ? cfg->hStream : NULL;
  LAUNCH (real_cuLaunchKernelEx (cfg, f, params, extra), f, s, params, extra, CFG_DIMS (cfg));
}

/* ---- per-thread default stream variants (_ptds, _ptsz) ----
 * Each records as its base function does, on the stream it runs on (PT,
 * PTDS: hooks-priv.h). */

CUresult
cuLaunchKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                     CUstream s, void **params, void **extra)
{
  PASS (cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
  LAUNCH (real_cuLaunchKernel_ptsz (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra), f, PT (s),
          params, extra, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchCooperativeKernel_ptsz (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shmem, CUstream s, void **params)
{
  PASS (cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz, bx, by, bz, shmem, s, params);
  LAUNCH (real_cuLaunchCooperativeKernel_ptsz (f, gx, gy, gz, bx, by, bz, shmem, s, params), f,
          PT (s), params, NULL, DIMS (gx, gy, gz, bx, by, bz, shmem));
}

CUresult
cuLaunchKernelEx_ptsz (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
  PASS (cuLaunchKernelEx_ptsz, cfg, f, params, extra);
  CUstream s = PT (cfg ? cfg->hStream : NULL);
  LAUNCH (real_cuLaunchKernelEx_ptsz (cfg, f, params, extra), f, s, params, extra, CFG_DIMS (cfg));
}
