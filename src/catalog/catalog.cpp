// Generated from ANTIPATTERNS.md (the table is the source; keep the two in step).
#include "ttap/catalog.hpp"

#include <array>

namespace ttap {

namespace {

constexpr std::array kCatalog{
    AntiPattern{"host_sync", "Host-device synchronization in the step loop",
                "long cudaStreamSynchronize / cudaDeviceSynchronize / cudaEventSynchronize / blocking cudaMemcpy on the host, usually under aten::item, aten::_local_scalar_dense, aten::nonzero, aten::to(cpu), aten::is_nonzero; the GPU queue drains and the GPU idles right after",
                "keep values on the device, log every N steps, non_blocking copies, avoid data-dependent shapes"},
    AntiPattern{"pageable_memcpy", "Copies from pageable host memory",
                "gpu_memcpy \"Memcpy HtoD (Pageable -> Device)\" (or DtoH to pageable); the cudaMemcpyAsync call lasts as long as the copy (it is synchronous)",
                "pin_memory=True, tensor.pin_memory(), .to(non_blocking=True)"},
    AntiPattern{"small_transfers", "Many small host/device transfers",
                "many memcpys under ~64 KB per step (scalars, tiny tensors created on the CPU then moved), each with launch overhead and often a sync",
                "create tensors on the device, batch transfers, keep scalars in Python"},
    AntiPattern{"offload_pingpong", "Tensors shuttled between CPU and GPU",
                "large HtoD and DtoH copies of the same sizes recurring within a step, memcpy a large share of step time",
                "keep the working set on the GPU when memory allows"},
    AntiPattern{"dataloader_stall", "GPU starved by the input pipeline",
                "long enumerate(DataLoader)#...__next__ spans (_SingleProcessDataLoaderIter means num_workers=0) while the GPU idles",
                "num_workers>0, persistent_workers, prefetch_factor, pin_memory, GPU-side augmentation"},
    AntiPattern{"cpu_bound_step", "GPU starved by host-side work",
                "long CPU op or Python spans with no kernels launched and the GPU idle (CPU preprocessing, metrics, numpy in the loop)",
                "move the work off the step path or onto the GPU"},
    AntiPattern{"launch_bound", "Kernel launch overhead dominates",
                "many kernels shorter than their launch (about <10 us), GPU idle gaps between consecutive kernels, high launch rate, launch delay growing",
                "CUDA graphs, torch.compile, larger batches, fused ops"},
    AntiPattern{"optimizer_single_tensor", "Per-parameter optimizer loop",
                "Optimizer.step issuing a handful of tiny kernels per parameter instead of multi_tensor_apply kernels",
                "foreach=True or fused=True optimizers"},
    AntiPattern{"grad_not_set_to_none", "Gradients zeroed with kernels",
                "zero_grad launching fill_/zero_ kernels per parameter",
                "zero_grad(set_to_none=True) (the default since 2.0)"},
    AntiPattern{"unfused_elementwise", "Chains of unfused elementwise kernels",
                "long runs of elementwise/vectorized kernels between GEMM/conv, memory-bound time large",
                "torch.compile, fused kernels (fused AdamW, fused norms), in-place ops"},
    AntiPattern{"fp32_no_tensor_cores", "Tensor-core eligible math in FP32",
                "conv/GEMM kernels without tensor-core names (no h884/hmma/16816/xmma/bf16/tf32 patterns) on Volta or newer",
                "autocast (bf16/fp16) or TF32"},
    AntiPattern{"layout_conversion", "Memory-format conversions around convolutions",
                "nchwToNhwc / nhwcToNchw / transpose kernels wrapping cuDNN convolutions",
                "channels_last model and input"},
    AntiPattern{"cast_churn", "Repeated dtype casts",
                "many aten::to / _to_copy / copy_ cast kernels per step (weights re-cast every step, .float()/.half() in the loop)",
                "cast once, keep master weights where the optimizer needs them"},
    AntiPattern{"alloc_churn", "Device allocations in the steady state",
                "cudaMalloc / cudaFree (or hipMalloc / hipFree) inside steps after warm-up; torch.cuda.empty_cache in the loop",
                "remove empty_cache, stable shapes, expandable segments"},
    AntiPattern{"redundant_copy", "Avoidable device-to-device copies",
                "Memcpy DtoD, aten::contiguous / clone / copy_ kernels of large tensors each step",
                "avoid .contiguous() churn, views, in-place ops"},
    AntiPattern{"low_occupancy", "Kernels too small for the GPU",
                "dominant kernels with grids smaller than the number of SMs, low estimated SM efficiency",
                "larger batch, fuse work"},
    AntiPattern{"comm_not_overlapped", "Communication not overlapped with compute",
                "NCCL/RCCL collective kernels running while the compute stream idles (exposed communication), e.g. all-reduce after the whole backward",
                "DDP bucketing and overlap, FSDP prefetch, async collectives"},
    AntiPattern{"comm_blocks_compute", "Communication blocks the compute stream",
                "collectives on the compute stream or compute waiting (cudaStreamWaitEvent / wait()) on the communication stream right after issuing it",
                "run collectives on their own stream and wait late"},
    AntiPattern{"graph_breaks", "torch.compile graph breaks / recompilation",
                "several Torch-Compiled Region / CompiledFunction spans per step with eager ops between them; TorchDynamo recompilation in the steady state",
                "remove the break (data-dependent control flow, unsupported ops), mark dynamic shapes"},
    AntiPattern{"gpu_idle", "Unexplained GPU idle time",
                "GPU idle gaps above a threshold that no more specific id explains",
                "look at the CPU side of the same time range"},
};

}  // namespace

std::span<const AntiPattern> catalog() { return kCatalog; }

const AntiPattern* find_anti_pattern(std::string_view id) {
  for (const AntiPattern& a : kCatalog)
    if (a.id == id) return &a;
  return nullptr;
}

}  // namespace ttap
