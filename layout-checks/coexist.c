/* One translation unit that includes our generated header and the upstream dlpack/dlpack.h and
 * arrow/c/abi.h, in the order chosen by -DOURS_FIRST. Shared include guards make whichever
 * comes second a no-op, so this must compile cleanly either way, as C11 and as C++11. */
#ifdef OURS_FIRST
#include "dlpack_abi.h"
#include <arrow/c/abi.h>
#include <dlpack/dlpack.h>
#else
#include <arrow/c/abi.h>
#include <dlpack/dlpack.h>
#include "dlpack_abi.h"
#endif

int main(void) {
  DLManagedTensorVersioned tensor;
  struct ArrowDeviceArray array;
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  struct ArrowDeviceArrayStream device_stream;
  struct ArrowAsyncDeviceStreamHandler handler;
  DLPackExchangeAPI api;
  (void)tensor;
  (void)array;
  (void)schema;
  (void)stream;
  (void)device_stream;
  (void)handler;
  (void)api;
  return kDLCPU == ARROW_DEVICE_CPU && ARROW_FLAG_NULLABLE == 2 ? 0 : 1;
}
