// A stand-in libcudart.so.13 for running the benchmark binaries on a host without a GPU: every
// call succeeds; cudaMalloc hands out never-touched addresses from a bump counter. With FC_LOG
// set, cudaMalloc ("M bytes"), cudaFree ("F") and cudaDeviceSynchronize ("S", once per workload
// run) are logged to stderr: where in the runs the pool grows (session au).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <cstdint>
#include <cstring>
static std::uintptr_t next_addr = 0x100000000000ull;
static void* bump(size_t n) { std::uintptr_t p = next_addr; next_addr += (n + (2u << 20) - 1) & ~std::uintptr_t((2u << 20) - 1); return reinterpret_cast<void*>(p); }
extern "C" {
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) { *v = 1; return cudaSuccess; }
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* p, int) { static int x; *p = reinterpret_cast<cudaMemPool_t>(&x); return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { if (getenv("FC_LOG")) fprintf(stderr, "S\n"); return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int* v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int* v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { static int x; *e = reinterpret_cast<cudaEvent_t>(&x); return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaFree(void*) { if (getenv("FC_LOG")) fprintf(stderr, "F\n"); return cudaSuccess; }
cudaError_t cudaFreeAsync(void*, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
cudaError_t cudaGetDriverEntryPointByVersion(const char*, void** f, unsigned int, unsigned long long, cudaDriverEntryPointQueryResult* r) { *f = nullptr; if (r) *r = cudaDriverEntryPointSymbolNotFound; return cudaErrorSymbolNotFound; }
const char* cudaGetErrorName(cudaError_t) { return "fakeError"; }
const char* cudaGetErrorString(cudaError_t) { return "fake error"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
cudaError_t cudaMalloc(void** p, size_t n) { if (getenv("FC_LOG")) fprintf(stderr, "M %zu\n", n); *p = bump(n); return cudaSuccess; }
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { *p = bump(n); return cudaSuccess; }
cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t, cudaStream_t) { *p = bump(n); return cudaSuccess; }
cudaError_t cudaMemGetInfo(size_t* f, size_t* t) { *f = 80ull << 30; *t = 80ull << 30; return cudaSuccess; }
cudaError_t cudaMemPoolCreate(cudaMemPool_t* p, const cudaMemPoolProps*) { static int x; *p = reinterpret_cast<cudaMemPool_t>(&x); return cudaSuccess; }
cudaError_t cudaMemPoolDestroy(cudaMemPool_t) { return cudaSuccess; }
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, cudaMemPoolAttr, void* v) { std::memset(v, 0, 8); return cudaSuccess; }
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus* s) { *s = cudaStreamCaptureStatusNone; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
}
