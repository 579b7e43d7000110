// SPDX-License-Identifier: Apache-2.0
#include "model.h"

#include <probescope/collect/precisiondebugger.h>

#include <ATen/ops/gelu_cpu_dispatch.h>
#include <torch/library.h>

#include <atomic>
#include <cmath>
#include <limits>

namespace probescope::example {

namespace collect = probescope::collect;
namespace F = torch::nn::functional;

ConvNetImpl::ConvNetImpl(const ModelSize& /*size*/)
{
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).padding(1)));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(4, 8, 3).padding(1)));
}

torch::Tensor ConvNetImpl::forward(const torch::Tensor& x)
{
    auto h = torch::relu(collect::call(conv1)(x));
    h = F::max_pool2d(h, F::MaxPool2dFuncOptions(2));
    return torch::relu(collect::call(conv2)(h));
}

SelfAttentionImpl::SelfAttentionImpl(const ModelSize& size)
{
    qkv = register_module("qkv", torch::nn::Linear(size.width, 3 * size.width));
    proj = register_module("proj", torch::nn::Linear(size.width, size.width));
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x)
{
    const auto parts = collect::call(qkv)(x).chunk(3, -1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(x.size(-1)));
    const auto scores = torch::matmul(parts[0], parts[1].transpose(-2, -1)) * scale;
    const auto attention = torch::softmax(scores, -1);
    return collect::call(proj)(torch::matmul(attention, parts[2]));
}

FeedForwardImpl::FeedForwardImpl(const ModelSize& size)
{
    fc1 = register_module("fc1", torch::nn::Linear(size.width, size.hidden));
    act = register_module("act", torch::nn::GELU());
    fc2 = register_module("fc2", torch::nn::Linear(size.hidden, size.width));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x)
{
    return collect::call(fc2)(collect::call(act)(collect::call(fc1)(x)));
}

TransformerBlockImpl::TransformerBlockImpl(const ModelSize& size)
{
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({ size.width })));
    attn = register_module("attn", SelfAttention(size));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({ size.width })));
    ffn = register_module("ffn", FeedForward(size));
}

torch::Tensor TransformerBlockImpl::forward(const torch::Tensor& x)
{
    auto h = x + collect::call(attn)(collect::call(ln1)(x));
    return h + collect::call(ffn)(collect::call(ln2)(h));
}

MLPImpl::MLPImpl(const ModelSize& size)
{
    fc1 = register_module("fc1", torch::nn::Linear(size.width, size.hidden));
    fc2 = register_module("fc2", torch::nn::Linear(size.hidden, size.width));
}

torch::Tensor MLPImpl::forward(const torch::Tensor& x)
{
    return collect::call(fc2)(torch::relu(collect::call(fc1)(x)));
}

ExampleNetImpl::ExampleNetImpl(const ModelSize& size)
{
    conv = register_module("conv", ConvNet(size));
    tokProj = register_module("tok_proj", torch::nn::Linear(8, size.width));
    block = register_module("block", TransformerBlock(size));
    mlp = register_module("mlp", MLP(size));
    head = register_module("head", torch::nn::Linear(size.width, size.classes));
    unstable = size.unstable;
    width = size.width;
}

torch::Tensor ExampleNetImpl::forward(const torch::Tensor& images)
{
    const auto features = collect::call(conv)(images);             // (B, 8, S/2, S/2)
    const auto tokens = features.flatten(2).transpose(1, 2);       // (B, S*S/4, 8)
    const auto x = collect::call(block)(collect::call(tokProj)(tokens));
    auto pooled = x.mean(1);
    if (unstable) {
        // aten::sum over terms of about +-16384 whose sum is O(1): the last bits of the terms decide the
        // result, so any perturbation of its input moves it far more than fp32's tolerance.
        constexpr double kShift = 16384;
        const auto terms = torch::cat({ pooled + kShift, torch::full_like(pooled, -kShift) }, -1);
        const auto cancelled = terms.sum(-1, /*keepdim=*/true);
        // A bfloat16 layer_norm rounds inside its kernel, so its float32 rerun (improve_precision, the
        // fix mode's replacement) differs from it in many elements.
        const auto normed = at::layer_norm(pooled.to(torch::kBFloat16), { width }).to(torch::kFloat);
        pooled = pooled + 0.5 * normed + 1e-3 * cancelled;
    }
    return collect::call(head)(collect::call(mlp)(pooled));
}

Batch makeBatch(std::int64_t step, const ModelSize& size)
{
    auto generator = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(1234 + step));
    Batch b;
    b.images = at::randn({ size.batch, 3, size.image, size.image }, generator);
    b.labels = at::randint(size.classes, { size.batch }, generator);
    return b;
}

namespace {

std::atomic<std::uint64_t> gNoiseSeed { 0 };
std::atomic<bool> gWriteInf { false };

at::Tensor buggyGelu(const at::Tensor& x, c10::string_view approximate)
{
    if (gWriteInf) {
        at::Tensor out = at::cpu::gelu(x, approximate);
        if (out.numel() > 0)
            out.view(-1)[0].fill_(std::numeric_limits<double>::infinity());
        return out;
    }
    static auto generator = at::make_generator<at::CPUGeneratorImpl>(gNoiseSeed.load());
    const at::Tensor noise = at::randn(x.sizes(), generator, x.options()) * (0.5 * x.std().item<double>());
    // at::cpu:: calls the CPU kernel directly: the dispatcher's aten::gelu is this function now.
    return at::cpu::gelu(x + noise, approximate);
}

} // namespace

std::unique_ptr<torch::Library> installBuggyGelu(std::uint64_t seed, bool writeInf)
{
    gNoiseSeed = seed;
    gWriteInf = writeInf;
    auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__,
                                                    __LINE__);
    library->impl("gelu", TORCH_FN(buggyGelu));
    return library;
}

} // namespace probescope::example
