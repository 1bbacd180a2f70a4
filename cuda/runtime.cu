// Errors, devices, the library stream, device buffers and their registry, events.
#include <atomic>
#include <map>
#include <mutex>
#include <unordered_set>
#include <stdio.h>
#include <string.h>

#include "common.cuh"

namespace gcy {

// ------------------------------------------------------------------ errors
static thread_local char g_last_error[512] = "";

int fail(int status, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
    va_end(ap);
    return status;
}

int fail_cuda(cudaError_t err, const char * what) {
    int status = GGML_CY_CUDA_ERR_CUDA;
    if (err == cudaErrorMemoryAllocation) status = GGML_CY_CUDA_ERR_OOM;
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        status = GGML_CY_CUDA_ERR_NO_DEVICE;
    }
    return fail(status, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

int check_launch(const char * what) {
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? GGML_CY_CUDA_OK : fail_cuda(err, what);
}

static std::atomic<bool> g_pdl{true};
bool pdl_enabled() { return g_pdl.load(std::memory_order_relaxed); }
static std::atomic<bool> g_mv_prefetch{true};
bool mv_prefetch_enabled() { return g_mv_prefetch.load(std::memory_order_relaxed); }
// one flag for the process (not per device or stream): a wrong guess costs a prefetch
static std::atomic<bool> g_last_pdl{false};
static thread_local bool t_follows_pdl = false;
void pdl_op_begin() { t_follows_pdl = g_last_pdl.exchange(false, std::memory_order_relaxed); }
bool pdl_follows() { return t_follows_pdl; }
void pdl_note_launch() { g_last_pdl.store(true, std::memory_order_relaxed); }
void pdl_note_other() { g_last_pdl.store(false, std::memory_order_relaxed); }

// ------------------------------------------------------------------ stream / device
static std::mutex g_mutex;            // guards the stream table and the buffer registry
static cudaStream_t g_streams[64];    // one library stream per device
static cudaDeviceProp g_props[64];
static bool g_props_ok[64];

static int current_device(int * dev) {
    GCY_CUDA(cudaGetDevice(dev), "cudaGetDevice");
    if (*dev < 0 || *dev >= 64) return fail(GGML_CY_CUDA_ERR_INVALID, "device %d out of range", *dev);
    return GGML_CY_CUDA_OK;
}

int get_stream(cudaStream_t * stream) {
    int dev;
    GCY_TRY(current_device(&dev));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_streams[dev]) {
        // Default flags: the stream orders itself with the legacy default stream, which is
        // where torch and cupy queue work unless told otherwise (DLPack exchanges then need
        // no extra synchronisation in the common case).
        // (A non-blocking stream measured no faster: the Q4_0 x1 mat-vec 7.29 us against 7.24
        // in a blocking one, tools/device/q4mv_probe.py, H100.)
        GCY_CUDA(cudaStreamCreate(&g_streams[dev]), "cudaStreamCreate");
    }
    *stream = g_streams[dev];
    return GGML_CY_CUDA_OK;
}

int device_props(const cudaDeviceProp ** props) {
    int dev;
    GCY_TRY(current_device(&dev));
    if (!g_props_ok[dev]) {
        GCY_CUDA(cudaGetDeviceProperties(&g_props[dev], dev), "cudaGetDeviceProperties");
        g_props_ok[dev] = true;
    }
    *props = &g_props[dev];
    return GGML_CY_CUDA_OK;
}

}  // namespace gcy

// ------------------------------------------------------------------ buffers
struct ggml_cy_cuda_buffer {
    void * base;
    size_t size;
    bool owned;       // cudaMalloc'ed by us (freed by us) or foreign (wrapped)
    size_t capacity;  // bytes actually allocated (owned blocks are rounded up)
    int device;
};

namespace gcy {

// Live regions by base address (a multimap: foreign regions wrapped from DLPack may overlap),
// and the set of live handles, looked up before any use so that a freed handle (whose struct
// is gone) is never dereferenced. A generation counter moves on every free, so callers
// that validated memory once (graph replays) know when to validate again.
static std::multimap<uintptr_t, ggml_cy_cuda_buffer *> g_regions;
static std::unordered_set<ggml_cy_cuda_buffer *> g_live;
static uint64_t g_generation = 1;

uint64_t registry_generation() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_generation;
}

static bool handle_live_locked(ggml_cy_cuda_buffer * buf) {
    return buf && g_live.count(buf);
}

// A region containing [p, p+n), or nullptr. Caller holds g_mutex. Owned regions never
// overlap, so the nearest base at or below p decides unless foreign regions are around;
// walk back a bounded number of entries for those.
static ggml_cy_cuda_buffer * region_of_locked(uintptr_t p, size_t n) {
    auto it = g_regions.upper_bound(p);
    for (int steps = 0; steps < 256 && it != g_regions.begin(); steps++) {
        --it;
        ggml_cy_cuda_buffer * b = it->second;
        uintptr_t base = (uintptr_t)b->base;
        if (n <= b->size && p - base <= b->size - n) return b;
    }
    return nullptr;
}

int check_tensor_memory(const ggml_tensor * t, const char * role) {
    if (!t) return fail(GGML_CY_CUDA_ERR_INVALID, "%s: tensor is NULL", role);
    if (!ggml_cy_type_known(t->type)) return fail(GGML_CY_CUDA_ERR_INVALID, "%s: invalid type %d", role, t->type);
    // quantized types: dim 0 counts values, blocks of blck_size values take nb[0] bytes each
    const int64_t blck = ggml_cy_blck_size(t->type);
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] <= 0) {
            if (t->ne[i] == 0) return GGML_CY_CUDA_OK;   // empty: touches nothing
            return fail(GGML_CY_CUDA_ERR_INVALID, "%s: negative ne[%d]", role, i);
        }
        int64_t n_i = t->ne[i];
        if (i == 0 && blck > 1) {
            if (n_i % blck) return fail(GGML_CY_CUDA_ERR_INVALID, "%s: ne[0] = %lld is not a multiple of %s's block size %lld",
                                        role, (long long)n_i, ggml_cy_type_name(t->type), (long long)blck);
            n_i /= blck;
        }
        int64_t span = (n_i - 1) * t->nb[i];
        if (span < 0) lo += span; else hi += span;
    }
    if (!t->data) return fail(GGML_CY_CUDA_ERR_BAD_POINTER, "%s: data pointer is NULL", role);
    uintptr_t first = (uintptr_t)t->data + lo;
    size_t n = (size_t)(hi - lo) + ggml_cy_block_bytes(t->type);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!region_of_locked(first, n)) {
        return fail(GGML_CY_CUDA_ERR_BAD_POINTER,
                    "%s: device memory %p..+%zu is not inside a live ggml_cy CUDA buffer "
                    "(freed, or never allocated)", role, (void *)first, n);
    }
    return GGML_CY_CUDA_OK;
}

}  // namespace gcy

using namespace gcy;

extern "C" {

const char * ggml_cy_cuda_last_error(void) { return g_last_error; }

const char * ggml_cy_cuda_status_name(int status) {
    switch (status) {
        case GGML_CY_CUDA_OK: return "ok";
        case GGML_CY_CUDA_ERR_NO_DEVICE: return "no device";
        case GGML_CY_CUDA_ERR_OOM: return "out of memory";
        case GGML_CY_CUDA_ERR_INVALID: return "invalid argument";
        case GGML_CY_CUDA_ERR_UNSUPPORTED: return "unsupported";
        case GGML_CY_CUDA_ERR_BAD_POINTER: return "bad device pointer";
        case GGML_CY_CUDA_ERR_CUDA: return "CUDA error";
        default: return "unknown status";
    }
}

int ggml_cy_cuda_device_count(int * count) {
    *count = 0;
    cudaError_t err = cudaGetDeviceCount(count);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        cudaGetLastError();   // clear it: "no device" is an answer, not a failure
        *count = 0;
        return GGML_CY_CUDA_OK;
    }
    if (err != cudaSuccess) { *count = 0; return fail_cuda(err, "cudaGetDeviceCount"); }
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_device_props_get(int device, ggml_cy_cuda_device_props * p) {
    cudaDeviceProp prop;
    GCY_CUDA(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    memset(p, 0, sizeof *p);
    strncpy(p->name, prop.name, sizeof p->name - 1);
    p->major = prop.major;
    p->minor = prop.minor;
    p->multiprocessors = prop.multiProcessorCount;
    p->total_memory = prop.totalGlobalMem;
    p->l2_cache_bytes = prop.l2CacheSize;
    p->max_grid_y = prop.maxGridSize[1];
    p->max_grid_z = prop.maxGridSize[2];
    cudaRuntimeGetVersion(&p->runtime_version);
    cudaDriverGetVersion(&p->driver_version);
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_set_device(int device) {
    GCY_CUDA(cudaSetDevice(device), "cudaSetDevice");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_get_device(int * device) {
    GCY_CUDA(cudaGetDevice(device), "cudaGetDevice");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_stream(void ** stream) {
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    *stream = (void *)s;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_set_pdl(int enable) {
    return gcy::g_pdl.exchange(enable != 0) ? 1 : 0;
}

int ggml_cy_cuda_set_mv_prefetch(int enable) {
    return gcy::g_mv_prefetch.exchange(enable != 0) ? 1 : 0;
}

int ggml_cy_cuda_synchronize(void) {
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    GCY_CUDA(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_mem_info(size_t * free_bytes, size_t * total_bytes) {
    GCY_CUDA(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
    return GGML_CY_CUDA_OK;
}

}  // extern "C"

namespace gcy {

// A small caching allocator: freed blocks wait here for a later allocation of a close size,
// so eager ops do not pay cudaMalloc/cudaFree (cudaFree synchronizes the device) each time.
// Reuse is safe because all of the library's work is queued on one stream per device, in
// order. The cache is capped, and flushed (then the allocation retried) when cudaMalloc
// runs out of memory. Freed blocks leave the registry at once: stale pointers are refused.
static std::multimap<size_t, void *> g_free_blocks[64];   // per device: capacity -> base
static size_t g_cached_bytes[64];
static const size_t CACHE_LIMIT = size_t(4) << 30;

static size_t round_block(size_t n) {
    if (n == 0) n = 1;
    if (n < (size_t(1) << 20)) return (n + 511) & ~size_t(511);
    const size_t g = size_t(2) << 20;
    return (n + g - 1) / g * g;
}

static void * take_cached_locked(int dev, size_t cap, size_t * got) {
    auto & fl = g_free_blocks[dev];
    auto it = fl.lower_bound(cap);
    if (it == fl.end() || it->first > cap + cap / 4) return nullptr;
    void * p = it->second;
    *got = it->first;
    g_cached_bytes[dev] -= it->first;
    fl.erase(it);
    return p;
}

static void flush_cache_locked(int dev) {
    for (auto & kv : g_free_blocks[dev]) cudaFree(kv.second);
    g_free_blocks[dev].clear();
    g_cached_bytes[dev] = 0;
}

}  // namespace gcy

extern "C" {

int ggml_cy_cuda_cache_clear(void) {
    int dev;
    GCY_CUDA(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev < 0 || dev >= 64) return GGML_CY_CUDA_OK;
    std::lock_guard<std::mutex> lock(g_mutex);
    flush_cache_locked(dev);
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_cache_bytes(size_t * bytes) {
    int dev;
    GCY_CUDA(cudaGetDevice(&dev), "cudaGetDevice");
    std::lock_guard<std::mutex> lock(g_mutex);
    *bytes = (dev >= 0 && dev < 64) ? g_cached_bytes[dev] : 0;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_alloc(size_t size, ggml_cy_cuda_buffer ** out) {
    *out = nullptr;
    int dev;
    GCY_CUDA(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev < 0 || dev >= 64) return fail(GGML_CY_CUDA_ERR_INVALID, "device %d out of range", dev);
    if (size > (size_t(1) << 62)) {
        return fail(GGML_CY_CUDA_ERR_OOM, "cudaMalloc of %zu bytes: more than any device holds", size);
    }
    const size_t cap = round_block(size);
    size_t got = cap;
    void * p = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        p = take_cached_locked(dev, cap, &got);
    }
    if (!p) {
        cudaError_t err = cudaMalloc(&p, cap);
        if (err == cudaErrorMemoryAllocation) {
            cudaGetLastError();   // OOM is not sticky: clear it, give the cache back, retry
            {
                std::lock_guard<std::mutex> lock(g_mutex);
                flush_cache_locked(dev);
            }
            err = cudaMalloc(&p, cap);
        }
        if (err != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            snprintf(what, sizeof what, "cudaMalloc of %zu bytes", size);
            return fail_cuda(err, what);
        }
    }
    auto * b = new ggml_cy_cuda_buffer{p, size ? size : 1, true, got, dev};
    std::lock_guard<std::mutex> lock(g_mutex);
    g_regions.emplace((uintptr_t)p, b);
    g_live.insert(b);
    *out = b;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_wrap(void * ptr, size_t size, ggml_cy_cuda_buffer ** out) {
    *out = nullptr;
    if (!ptr) return fail(GGML_CY_CUDA_ERR_INVALID, "cannot wrap a NULL device pointer");
    int dev = 0;
    cudaGetDevice(&dev);
    auto * b = new ggml_cy_cuda_buffer{ptr, size ? size : 1, false, size ? size : 1, dev};
    std::lock_guard<std::mutex> lock(g_mutex);
    g_regions.emplace((uintptr_t)ptr, b);
    g_live.insert(b);
    *out = b;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_free(ggml_cy_cuda_buffer * buf) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!handle_live_locked(buf)) {
            return fail(GGML_CY_CUDA_ERR_BAD_POINTER, "buffer handle %p is not live (already freed?)",
                        (void *)buf);
        }
        auto range = g_regions.equal_range((uintptr_t)buf->base);
        for (auto it = range.first; it != range.second; ++it) {
            if (it->second == buf) { g_regions.erase(it); break; }
        }
        g_live.erase(buf);
        g_generation++;
    }
    int status = GGML_CY_CUDA_OK;
    if (buf->owned) {
        bool cached = false;
        {
            std::lock_guard<std::mutex> lock(g_mutex);
            if (buf->device >= 0 && buf->device < 64 &&
                g_cached_bytes[buf->device] + buf->capacity <= CACHE_LIMIT) {
                g_free_blocks[buf->device].emplace(buf->capacity, buf->base);
                g_cached_bytes[buf->device] += buf->capacity;
                cached = true;
            }
        }
        if (!cached) {
            cudaError_t err = cudaFree(buf->base);   // cudaFree waits for pending work itself
            if (err != cudaSuccess) status = fail_cuda(err, "cudaFree");
        }
    }
    delete buf;
    return status;
}

int ggml_cy_cuda_buffer_info(ggml_cy_cuda_buffer * buf, void ** base, size_t * size) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!handle_live_locked(buf)) return fail(GGML_CY_CUDA_ERR_BAD_POINTER, "buffer was freed");
    *base = buf->base;
    *size = buf->size;
    return GGML_CY_CUDA_OK;
}

static int check_range(ggml_cy_cuda_buffer * buf, size_t offset, size_t size, void ** dev) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!handle_live_locked(buf)) return fail(GGML_CY_CUDA_ERR_BAD_POINTER, "buffer was freed");
    if (offset > buf->size || size > buf->size - offset) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "range %zu..+%zu is outside the %zu-byte buffer",
                    offset, size, buf->size);
    }
    *dev = (char *)buf->base + offset;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_memset(ggml_cy_cuda_buffer * buf, size_t offset, int value, size_t size) {
    void * dev;
    GCY_TRY(check_range(buf, offset, size, &dev));
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    gcy::pdl_note_other();
    GCY_CUDA(cudaMemsetAsync(dev, value, size, s), "cudaMemsetAsync");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_set(ggml_cy_cuda_buffer * buf, size_t offset, const void * host, size_t size) {
    void * dev;
    GCY_TRY(check_range(buf, offset, size, &dev));
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    gcy::pdl_note_other();
    GCY_CUDA(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync host->device");
    // pageable host memory may be reused by the caller as soon as we return
    GCY_CUDA(cudaStreamSynchronize(s), "cudaStreamSynchronize after host->device copy");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_buffer_get(ggml_cy_cuda_buffer * buf, size_t offset, void * host, size_t size) {
    void * dev;
    GCY_TRY(check_range(buf, offset, size, &dev));
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    gcy::pdl_note_other();
    GCY_CUDA(cudaMemcpyAsync(host, dev, size, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync device->host");
    GCY_CUDA(cudaStreamSynchronize(s), "cudaStreamSynchronize after device->host copy");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_range_valid(const void * ptr, size_t size) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return region_of_locked((uintptr_t)ptr, size ? size : 1) != nullptr;
}

int ggml_cy_cuda_event_create(void ** event) {
    cudaEvent_t e;
    GCY_CUDA(cudaEventCreate(&e), "cudaEventCreate");
    *event = (void *)e;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_event_record(void * event) {
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    GCY_CUDA(cudaEventRecord((cudaEvent_t)event, s), "cudaEventRecord");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_event_elapsed_ms(void * start, void * end, float * ms) {
    GCY_CUDA(cudaEventSynchronize((cudaEvent_t)end), "cudaEventSynchronize");
    GCY_CUDA(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end), "cudaEventElapsedTime");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_event_destroy(void * event) {
    GCY_CUDA(cudaEventDestroy((cudaEvent_t)event), "cudaEventDestroy");
    return GGML_CY_CUDA_OK;
}

static cudaStream_t other_stream(void * other) {
    if (other == nullptr || other == (void *)1) return cudaStreamLegacy;
    if (other == (void *)2) return cudaStreamPerThread;
    return (cudaStream_t)other;
}

static int stream_wait(cudaStream_t waiter, cudaStream_t producer) {
    if (waiter == producer) return GGML_CY_CUDA_OK;
    cudaEvent_t e;
    GCY_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    cudaError_t err = cudaEventRecord(e, producer);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(waiter, e, 0);
    cudaEventDestroy(e);
    if (err != cudaSuccess) return fail_cuda(err, "cross-stream wait");
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_stream_wait_other(void * other) {
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    return stream_wait(s, other_stream(other));
}

int ggml_cy_cuda_other_wait_stream(void * other) {
    cudaStream_t s;
    GCY_TRY(get_stream(&s));
    return stream_wait(other_stream(other), s);
}

}  // extern "C"
