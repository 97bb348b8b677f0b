/* hooks-graph.c — hook mode's graphs: the kernel nodes of an
 * instantiated graph, kept by exec (both modes), and graph launches,
 * which record them. See hooks.c. */
#define _GNU_SOURCE
#include "hooks-priv.h"

/* ---- graphs: the kernel nodes of an instantiated graph, by exec ---- */

typedef struct { uint32_t sid; uint32_t nw; uint64_t *w; uint64_t node_id; CapShape shape; } GKernel;
typedef struct GExec { CUgraphExec exec; uint32_t n; GKernel *k; struct GExec *next; } GExec;
static GExec *g_execs;
static pthread_mutex_t g_exec_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t (*hooks_graph_node_id_cb) (void *node);

static void
graph_remember (CUgraphExec exec, CUgraph graph)
{
  /* An exec the shim saw destroyed is forgotten then; one destroyed out of
   * its sight (while CUPTI recorded, say) must not lend its kernels to a
   * new exec at the same address. */
  hooks_graph_forget (exec);
  size_t n = 0;
  if (!real_cuGraphGetNodes || real_cuGraphGetNodes (graph, NULL, &n) != CUDA_SUCCESS || n == 0)
    return;
  CUgraphNode *nodes = calloc (n, sizeof *nodes);
  GExec *ge = calloc (1, sizeof *ge);
  if (ge)
    ge->k = calloc (n, sizeof *ge->k);
  if (!nodes || !ge || !ge->k || real_cuGraphGetNodes (graph, nodes, &n) != CUDA_SUCCESS) {
    free (nodes);
    if (ge)
      free (ge->k);
    free (ge);
    return;
  }
  ge->exec = exec;
  for (size_t i = 0; i < n; i++) {
    CUgraphNodeType type;
    CUDA_KERNEL_NODE_PARAMS kp;
    if (real_cuGraphNodeGetType (nodes[i], &type) != CUDA_SUCCESS || type != CU_GRAPH_NODE_TYPE_KERNEL)
      continue;
    memset (&kp, 0, sizeof kp);
    if (!real_cuGraphKernelNodeGetParams_v2
        || real_cuGraphKernelNodeGetParams_v2 (nodes[i], &kp) != CUDA_SUCCESS)
      continue;
    CUfunction f = kp.func ? kp.func : (CUfunction) kp.kern;
    FuncInfo *fi = func_info (f);
    uint64_t words[MAX_WORDS];
    size_t nw = param_words (fi, kp.kernelParams, kp.extra, words);
    GKernel *gk = &ge->k[ge->n];
    gk->sid = fi ? fi->sid : cap_intern ("unknown");
    gk->w = nw ? malloc (nw * sizeof *gk->w) : NULL;
    if (gk->w)
      memcpy (gk->w, words, nw * sizeof *gk->w);
    gk->nw = gk->w ? (uint32_t) nw : 0;
    gk->node_id = hooks_graph_node_id_cb ? hooks_graph_node_id_cb (nodes[i]) : 0;
    gk->shape = DIMS (kp.gridDimX, kp.gridDimY, kp.gridDimZ, kp.blockDimX, kp.blockDimY,
                      kp.blockDimZ, kp.sharedMemBytes);
    launch_shape (fi, &gk->shape);
    ge->n++;
  }
  free (nodes);
  pthread_mutex_lock (&g_exec_lock);
  ge->next = g_execs;
  g_execs = ge;
  pthread_mutex_unlock (&g_exec_lock);
}

/* Every way to instantiate: the kernel nodes are read from the graph once
 * the driver has made the exec (the exec keeps the graph as it was then).
 * The call's arguments and result are the program's, untouched. */
#define INSTANTIATE(call) \
  do { \
    CUresult r = call; \
    if (r == CUDA_SUCCESS && exec && graph) \
      graph_remember (*exec, graph); \
    return r; \
  } while (0)

CUresult
cuGraphInstantiateWithFlags (CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
  PASS (cuGraphInstantiateWithFlags, exec, graph, flags);
  INSTANTIATE (real_cuGraphInstantiateWithFlags (exec, graph, flags));
}

CUresult
cuGraphInstantiateWithParams (CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
  PASS (cuGraphInstantiateWithParams, exec, graph, ip);
  INSTANTIATE (real_cuGraphInstantiateWithParams (exec, graph, ip));
}

CUresult
cuGraphInstantiateWithParams_ptsz (CUgraphExec *exec, CUgraph graph,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
{
  PASS (cuGraphInstantiateWithParams_ptsz, exec, graph, ip);
  INSTANTIATE (real_cuGraphInstantiateWithParams_ptsz (exec, graph, ip));
}

CUresult
cuGraphInstantiate_v2 (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log,
                       size_t log_size)
{
  PASS (cuGraphInstantiate_v2, exec, graph, err, log, log_size);
  INSTANTIATE (real_cuGraphInstantiate_v2 (exec, graph, err, log, log_size));
}

CUresult
cuGraphInstantiate (CUgraphExec *exec, CUgraph graph, CUgraphNode *err, char *log, size_t log_size)
{
  PASS (cuGraphInstantiate, exec, graph, err, log, log_size);
  INSTANTIATE (real_cuGraphInstantiate (exec, graph, err, log, log_size));
}

void
hooks_graph_remember (void *exec, void *graph)
{
  resolve ();
  graph_remember ((CUgraphExec) exec, (CUgraph) graph);
}

void
hooks_graph_forget (void *exec)
{
  pthread_mutex_lock (&g_exec_lock);
  for (GExec **pp = &g_execs; *pp; pp = &(*pp)->next)
    if ((*pp)->exec == exec) {
      GExec *ge = *pp;
      *pp = ge->next;
      for (uint32_t i = 0; i < ge->n; i++)
        free (ge->k[i].w);
      free (ge->k);
      free (ge);
      break;
    }
  pthread_mutex_unlock (&g_exec_lock);
}

CUresult
cuGraphExecDestroy (CUgraphExec exec)
{
  PASS (cuGraphExecDestroy, exec);
  hooks_graph_forget (exec);
  return real_cuGraphExecDestroy (exec);
}

uint32_t
hooks_graph_kernels (void *exec, uintptr_t stream, uint64_t t0, uint64_t t1, int pending,
                     uint64_t corr, uint64_t *first, uint64_t **node_ids)
{
  uint32_t count = 0;
  *first = UINT64_MAX;
  if (node_ids)
    *node_ids = NULL;
  pthread_mutex_lock (&g_exec_lock);
  for (GExec *ge = g_execs; ge; ge = ge->next)
    if (ge->exec == (CUgraphExec) exec) {
      if (node_ids && ge->n)
        *node_ids = calloc (ge->n, sizeof **node_ids);
      for (uint32_t i = 0; i < ge->n; i++) {
        uint64_t seq = cap_kernel (t0, i + 1 == ge->n ? t1 : t0, ge->k[i].sid, stream,
                                   ge->k[i].w, ge->k[i].nw, pending, corr, &ge->k[i].shape);
        if (seq == UINT64_MAX)
          break;
        if (*first == UINT64_MAX)
          *first = seq;
        if (node_ids && *node_ids)
          (*node_ids)[count] = ge->k[i].node_id;
        count++;
      }
      break;
    }
  pthread_mutex_unlock (&g_exec_lock);
  return count;
}

/* One kernel event per kernel node, in node order, on the launch stream;
 * the graph's measured time is split evenly among them. */
static CUresult
graph_launch (__typeof__ (cuGraphLaunch) *fn, CUgraphExec exec, CUstream call_s, CUstream s)
{
  if (capturing (s))
    return fn (exec, call_s);
  uint64_t t0 = cap_now ();
  Timer tm;
  timer_begin (&tm, s);
  CUresult r = fn (exec, call_s);
  timer_stop (&tm, s);
  uint64_t t1 = cap_now ();
  if (r != CUDA_SUCCESS) {
    timer_cancel (&tm);
    return r;
  }
  uint64_t first;
  uint32_t count = hooks_graph_kernels (exec, (uintptr_t) s, t0, t1, tm.ok, 0, &first, NULL);
  /* Kernels of one launch are pushed one by one; another thread may push in
   * between, so they are contiguous only without contention. Resolve each. */
  if (count > 0 && tm.ok) {
    cap_lock ();
    uint64_t last = first;
    int contiguous = 1;
    for (uint32_t i = 1; i < count; i++) {
      VtEvent *e = cap_get_locked (first + i);
      if (!e || e->op != VTW_KERNEL)
        contiguous = 0;
      last = first + i;
    }
    (void) last;
    cap_unlock ();
    if (contiguous) {
      timer_commit (&tm, first, count);
      return r;
    }
    cap_lock ();
    for (uint32_t i = 0; i < count; i++)
      cap_resolve_locked (first + i, VTW_NONE);
    cap_unlock ();
  }
  timer_commit (&tm, UINT64_MAX, 0);
  return r;
}

CUresult
cuGraphLaunch (CUgraphExec exec, CUstream s)
{
  PASS (cuGraphLaunch, exec, s);
  return graph_launch (real_cuGraphLaunch, exec, s, s);
}

/* ---- per-thread default stream variants (_ptds, _ptsz) ----
 * Each records as its base function does, on the stream it runs on (PT,
 * PTDS: hooks-priv.h). */

CUresult
cuGraphLaunch_ptsz (CUgraphExec exec, CUstream s)
{
  PASS (cuGraphLaunch_ptsz, exec, s);
  return graph_launch (real_cuGraphLaunch_ptsz, exec, s, PT (s));
}
