// Stubs for the CUDA calls 37d4a84's pool makes once per stream slot (no GPU on this machine).
#include <cuda_runtime_api.h>
extern "C" {
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { static int x; *e = reinterpret_cast<cudaEvent_t>(&x); return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
}
extern "C" {
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
}
