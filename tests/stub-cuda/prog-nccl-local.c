/* prog-nccl-local.c — prog-nccl's calls from libnccl-user.so, opened with
 * dlopen(RTLD_LOCAL) the way Python opens an extension module that needs
 * libnccl.so.2 (PyTorch): the stub libnccl is then in that library's local
 * scope only, where the NCCL wrap must still find it (capture/nccl.c
 * find_real). The library is found on LD_LIBRARY_PATH. */
#include <dlfcn.h>
#include <stdio.h>

int
main (void)
{
  void *h = dlopen ("libnccl-user.so", RTLD_NOW | RTLD_LOCAL);
  int (*run) (void) = h ? (int (*) (void)) dlsym (h, "prog_nccl_run") : NULL;
  if (!run) {
    fprintf (stderr, "prog-nccl-local: %s\n", dlerror ());
    return 1;
  }
  return run ();
}
