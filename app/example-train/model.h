// SPDX-License-Identifier: Apache-2.0
// The example model of probescope-example-train (conv + attention + MLP), shared with the collection
// tests and the benchmark. Every submodule call goes through probescope::collect::call(), the one-line
// mark that gives level L0/mix its Module.* entries.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

namespace torch {
class Library;
}

namespace probescope::example {

/// Sizes of the model and its data. The defaults keep a step at a few milliseconds (tests); the
/// benchmark scales them up.
struct ModelSize
{
    std::int64_t batch = 4;
    std::int64_t image = 8;   ///< image side (3 channels)
    std::int64_t width = 16;  ///< token width of the transformer block
    std::int64_t hidden = 32; ///< hidden width of the feed-forward and MLP layers
    std::int64_t classes = 10;
    /// --unstable-op: adds an ill-conditioned aten::sum (large terms that cancel) and a bfloat16 layer_norm
    /// before the MLP, for the free benchmark to find (docs/free-benchmark.md).
    bool unstable = false;
};

struct ConvNetImpl : torch::nn::Module
{
    explicit ConvNetImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::Conv2d conv1 { nullptr }, conv2 { nullptr };
};
TORCH_MODULE(ConvNet);

struct SelfAttentionImpl : torch::nn::Module
{
    explicit SelfAttentionImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::Linear qkv { nullptr }, proj { nullptr };
};
TORCH_MODULE(SelfAttention);

struct FeedForwardImpl : torch::nn::Module
{
    explicit FeedForwardImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::Linear fc1 { nullptr }, fc2 { nullptr };
    torch::nn::GELU act { nullptr };
};
TORCH_MODULE(FeedForward);

struct TransformerBlockImpl : torch::nn::Module
{
    explicit TransformerBlockImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::LayerNorm ln1 { nullptr }, ln2 { nullptr };
    SelfAttention attn { nullptr };
    FeedForward ffn { nullptr };
};
TORCH_MODULE(TransformerBlock);

struct MLPImpl : torch::nn::Module
{
    explicit MLPImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& x);
    torch::nn::Linear fc1 { nullptr }, fc2 { nullptr };
};
TORCH_MODULE(MLP);

/// conv -> tokens -> tok_proj -> block -> mean over tokens -> mlp -> head (logits).
struct ExampleNetImpl : torch::nn::Module
{
    explicit ExampleNetImpl(const ModelSize& size);
    torch::Tensor forward(const torch::Tensor& images);
    ConvNet conv { nullptr };
    torch::nn::Linear tokProj { nullptr };
    TransformerBlock block { nullptr };
    MLP mlp { nullptr };
    torch::nn::Linear head { nullptr };
    bool unstable = false;
    std::int64_t width = 0;
};
TORCH_MODULE(ExampleNet);

struct Batch
{
    torch::Tensor images;
    torch::Tensor labels;
};

/// The data of a step, from a generator of its own (seeded by step), so the model's random state is
/// not touched and every run sees the same data.
Batch makeBatch(std::int64_t step, const ModelSize& size);

/**
 * @brief Replaces LibTorch's CPU kernel of aten::gelu by a "buggy kernel" for as long as the result lives.
 *
 * The kernel evaluates gelu(x + n), n ~ N(0, (0.5 std(x))^2) from a private generator, the way an NPU
 * kernel with a precision bug would: a debugger sees the clean x as input and a wrong output, and the
 * noise's own ops run inside aten::gelu, so they are not top-level calls. Other random numbers of the
 * run are not touched, so a run with and one without it form an NPU/bench pair. With `writeInf` the
 * kernel adds no noise but writes +inf into the first element instead (an overflow for overflow_check).
 */
std::unique_ptr<torch::Library> installBuggyGelu(std::uint64_t seed, bool writeInf = false);

} // namespace probescope::example
