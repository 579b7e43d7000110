// SPDX-License-Identifier: Apache-2.0
// run_ut's replay, the Functional.* table: torch.nn.functional's Python signatures (bound by name as Python does)
// and the adapters that turn a Python wrapper's arguments into its aten operator's.
#include "core/runuttorch/calls.h"

#include <ATen/ATen.h>

namespace probescope::runuttorch::detail {

namespace {

PyValue parseDefault(const std::string& text)
{
    if (text == "None")
        return PyValue::none();
    if (text == "True" || text == "False")
        return PyValue::fromBool(text == "True");
    if (text.size() >= 2 && text.front() == '\'')
        return PyValue::fromStr(text.substr(1, text.size() - 2));
    if (text.find_first_of(".e") != std::string::npos)
        return PyValue::fromFloat(std::stod(text));
    return PyValue::fromInt(std::stoll(text));
}

/// reduction='mean' and the legacy size_average/reduce flags -> aten's Reduction enum.
void reductionToInt(Bound& b)
{
    std::string reduction = "mean";
    if (const PyValue* r = b.get("reduction"); r && r->kind == PyValue::Kind::Str)
        reduction = r->text;
    const PyValue* sizeAverage = b.get("size_average");
    const PyValue* reduce = b.get("reduce");
    if ((sizeAverage && sizeAverage->kind != PyValue::Kind::None) || (reduce && reduce->kind != PyValue::Kind::None)) {
        const bool avg = !sizeAverage || sizeAverage->kind == PyValue::Kind::None || b.isTrue("size_average");
        const bool red = !reduce || reduce->kind == PyValue::Kind::None || b.isTrue("reduce");
        reduction = !red ? "none" : avg ? "mean" : "sum";
    }
    std::int64_t value = 1;
    if (reduction == "none")
        value = 0;
    else if (reduction == "sum")
        value = 2;
    else if (reduction != "mean")
        throw ReplayError(reduction + " is not a valid value for reduction");
    b.set("reduction", PyValue::fromInt(value));
}

void inplaceVariant(Bound& b)
{
    if (b.isTrue("inplace"))
        b.op += "_";
}

void batchNormAdapter(Bound& b)
{
    b.set("cudnn_enabled", PyValue::fromBool(true));
}

void dropoutAdapter(Bound& b)
{
    b.rename("training", "train");
    inplaceVariant(b);
}

void softmaxAdapter(Bound& b)
{
    // F.softmax(dim=None) picks the dimension itself (_get_softmax_dim).
    PyValue* dim = b.get("dim");
    if (dim && dim->kind == PyValue::Kind::None) {
        const std::int64_t nd = b.tensor("input").dim();
        *dim = PyValue::fromInt(nd == 0 || nd == 1 || nd == 3 ? 0 : 1);
    }
}

void lossAdapter(Bound& b)
{
    reductionToInt(b);
}

void mseAdapter(Bound& b)
{
    reductionToInt(b);
    // F.mse_loss/l1_loss broadcast the operands before calling aten.
    auto both = at::broadcast_tensors({ b.tensor("input"), b.tensor("target") });
    b.set("input", PyValue::fromTensor(both[0]));
    b.set("target", PyValue::fromTensor(both[1]));
}

void embeddingAdapter(Bound& b)
{
    const PyValue* maxNorm = b.get("max_norm");
    if (maxNorm && maxNorm->kind != PyValue::Kind::None)
        throw ReplayError("embedding with max_norm renormalises the weight in place, which the replay does not do");
    const std::int64_t rows = b.tensor("weight").size(0);
    PyValue* pad = b.get("padding_idx");
    if (!pad || pad->kind == PyValue::Kind::None)
        b.set("padding_idx", PyValue::fromInt(-1));
    else if (pad->kind == PyValue::Kind::Int && pad->intValue < 0)
        pad->intValue += rows;
    b.rename("input", "indices");
}

void poolStrideAdapter(Bound& b)
{
    PyValue* stride = b.get("stride");
    if (stride && stride->kind == PyValue::Kind::None) {
        PyValue empty;
        empty.kind = PyValue::Kind::List;
        *stride = empty;
    }
}

void maxPoolAdapter(Bound& b)
{
    poolStrideAdapter(b);
    if (b.isTrue("return_indices"))
        b.op += "_with_indices";
}

void adaptivePoolSizeFix(Bound& b)
{
    PyValue* size = b.get("output_size");
    const at::Tensor& input = b.tensor("input");
    if (size && size->kind == PyValue::Kind::List) {
        const std::int64_t n = static_cast<std::int64_t>(size->items.size());
        for (std::int64_t k = 0; k < n; ++k) {
            if (size->items[k].kind == PyValue::Kind::None)
                size->items[k] = PyValue::fromInt(input.size(input.dim() - n + k));
        }
    }
}

void adaptiveMaxAdapter(Bound& b)
{
    adaptivePoolSizeFix(b);
    if (!b.isTrue("return_indices"))
        b.pickOutput = 0;
}

void interpolateAdapter(Bound& b)
{
    const at::Tensor& input = b.tensor("input");
    const std::int64_t dims = input.dim() - 2;
    if (dims < 1 || dims > 3)
        throw ReplayError("interpolate expects a 3-D, 4-D or 5-D input");
    std::string mode = "nearest";
    if (const PyValue* m = b.get("mode"); m && m->kind == PyValue::Kind::Str)
        mode = m->text;
    PyValue size = b.get("size") ? *b.get("size") : PyValue::none();
    PyValue scale = b.get("scale_factor") ? *b.get("scale_factor") : PyValue::none();
    auto repeat = [&](PyValue v) {
        if (v.kind == PyValue::Kind::Int || v.kind == PyValue::Kind::Float) {
            PyValue list;
            list.kind = PyValue::Kind::List;
            list.items.assign(static_cast<std::size_t>(dims), v);
            return list;
        }
        return v;
    };
    size = repeat(size);
    scale = repeat(scale);
    if (scale.kind == PyValue::Kind::List) {
        for (PyValue& e : scale.items)
            e = PyValue::fromFloat(e.number());
    }
    if (b.isTrue("recompute_scale_factor") && scale.kind == PyValue::Kind::List) {
        PyValue sizes;
        sizes.kind = PyValue::Kind::List;
        for (std::int64_t k = 0; k < dims; ++k)
            sizes.items.push_back(PyValue::fromInt(static_cast<std::int64_t>(
                std::floor(static_cast<double>(input.size(2 + k)) * scale.items[static_cast<std::size_t>(k)].floatValue))));
        size = sizes;
        scale = PyValue::none();
    }
    const bool alignCorners = b.isTrue("align_corners");
    const std::string n = std::to_string(dims);
    b.named.clear();
    b.rebuilt = true;
    b.set("input", PyValue::fromTensor(input));
    b.set("output_size", size);
    if (mode == "nearest" || mode == "nearest-exact") {
        b.op = (mode == "nearest" ? "upsample_nearest" : "_upsample_nearest_exact") + n + "d";
    } else {
        static const std::map<std::string, std::string> linear = {
            { "linear", "1" }, { "bilinear", "2" }, { "trilinear", "3" }, { "bicubic", "2" } };
        const auto it = linear.find(mode);
        if (it == linear.end() || it->second != n)
            throw ReplayError("interpolate mode '" + mode + "' with a " + std::to_string(dims + 2)
                              + "-D input is not supported by the replay");
        b.op = mode == "linear" ? "upsample_linear1d" : mode == "bilinear" ? "upsample_bilinear2d"
            : mode == "trilinear"                      ? "upsample_trilinear3d"
                                                       : "upsample_bicubic2d";
        b.set("align_corners", PyValue::fromBool(alignCorners));
    }
    b.set("scale_factors", scale);
}

void oneHotAdapter(Bound& b)
{
    b.rename("tensor", "self");
}

} // namespace

std::vector<Param> parseSignature(const char* signature)
{
    std::vector<Param> params;
    std::string text(signature);
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find(',', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string item = text.substr(pos, end - pos);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) {
            Param p;
            if (item.front() == '~') {
                p.pythonOnly = true;
                item.erase(0, 1);
            }
            const auto eq = item.find('=');
            p.name = item.substr(0, eq);
            if (eq != std::string::npos)
                p.defaultValue = parseDefault(item.substr(eq + 1));
            params.push_back(std::move(p));
        }
        pos = end + 1;
    }
    return params;
}

const std::vector<FunctionalDef>& functionalDefs()
{
    static const std::vector<FunctionalDef> defs = {
        { "linear", "input, weight, bias=None", "linear" },
        { "bilinear", "input1, input2, weight, bias=None", "bilinear" },
        { "conv1d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv1d" },
        { "conv2d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv2d" },
        { "conv3d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv3d" },
        { "conv_transpose1d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose1d" },
        { "conv_transpose2d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose2d" },
        { "conv_transpose3d", "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
          "conv_transpose3d" },
        { "layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05", "layer_norm" },
        { "batch_norm",
          "input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05",
          "batch_norm", batchNormAdapter },
        { "instance_norm",
          "input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-05",
          "instance_norm", batchNormAdapter },
        { "group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05", "group_norm" },
        { "relu", "input, ~inplace=False", "relu", inplaceVariant },
        { "relu6", "input, ~inplace=False", "relu6" },
        { "gelu", "input, approximate='none'", "gelu" },
        { "silu", "input, ~inplace=False", "silu", inplaceVariant },
        { "sigmoid", "input", "sigmoid" },
        { "tanh", "input", "tanh" },
        { "softplus", "input, beta=1, threshold=20", "softplus" },
        { "leaky_relu", "input, negative_slope=0.01, ~inplace=False", "leaky_relu", inplaceVariant },
        { "elu", "input, alpha=1.0, ~inplace=False", "elu", inplaceVariant },
        { "selu", "input, ~inplace=False", "selu", inplaceVariant },
        { "celu", "input, alpha=1.0, ~inplace=False", "celu", inplaceVariant },
        { "hardswish", "input, ~inplace=False", "hardswish", inplaceVariant },
        { "hardsigmoid", "input, ~inplace=False", "hardsigmoid", inplaceVariant },
        { "hardtanh", "input, min_val=-1.0, max_val=1.0, ~inplace=False", "hardtanh", inplaceVariant },
        { "mish", "input, ~inplace=False", "mish", inplaceVariant },
        { "logsigmoid", "input", "log_sigmoid" },
        { "glu", "input, dim=-1", "glu" },
        { "threshold", "input, threshold, value, ~inplace=False", "threshold", inplaceVariant },
        { "prelu", "input, weight", "prelu" },
        { "softmax", "input, dim=None, ~_stacklevel=3, dtype=None", "softmax", softmaxAdapter },
        { "log_softmax", "input, dim=None, ~_stacklevel=3, dtype=None", "log_softmax", softmaxAdapter },
        { "dropout", "input, p=0.5, training=True, ~inplace=False", "dropout", dropoutAdapter },
        { "dropout1d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "dropout2d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "dropout3d", "input, p=0.5, training=True, ~inplace=False", "feature_dropout", dropoutAdapter },
        { "alpha_dropout", "input, p=0.5, training=False, ~inplace=False", "alpha_dropout", dropoutAdapter },
        { "cross_entropy",
          "input, target, weight=None, ~size_average=None, ignore_index=-100, ~reduce=None, reduction='mean', label_smoothing=0.0",
          "cross_entropy_loss", lossAdapter },
        { "nll_loss", "input, target, weight=None, ~size_average=None, ignore_index=-100, ~reduce=None, reduction='mean'",
          "nll_loss_nd", lossAdapter },
        { "mse_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean'", "mse_loss", mseAdapter },
        { "l1_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean'", "l1_loss", mseAdapter },
        { "smooth_l1_loss", "input, target, ~size_average=None, ~reduce=None, reduction='mean', beta=1.0",
          "smooth_l1_loss", mseAdapter },
        { "binary_cross_entropy", "input, target, weight=None, ~size_average=None, ~reduce=None, reduction='mean'",
          "binary_cross_entropy", lossAdapter },
        { "binary_cross_entropy_with_logits",
          "input, target, weight=None, ~size_average=None, ~reduce=None, reduction='mean', pos_weight=None",
          "binary_cross_entropy_with_logits", lossAdapter },
        { "embedding",
          "input, weight, padding_idx=None, ~max_norm=None, ~norm_type=2.0, scale_grad_by_freq=False, sparse=False",
          "embedding", embeddingAdapter },
        { "max_pool1d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool1d", maxPoolAdapter },
        { "max_pool2d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool2d", maxPoolAdapter },
        { "max_pool3d", "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, ~return_indices=False",
          "max_pool3d", maxPoolAdapter },
        { "avg_pool1d", "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True",
          "avg_pool1d", poolStrideAdapter },
        { "avg_pool2d",
          "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
          "avg_pool2d", poolStrideAdapter },
        { "avg_pool3d",
          "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
          "avg_pool3d", poolStrideAdapter },
        { "adaptive_avg_pool1d", "input, output_size", "adaptive_avg_pool1d", adaptivePoolSizeFix },
        { "adaptive_avg_pool2d", "input, output_size", "adaptive_avg_pool2d", adaptivePoolSizeFix },
        { "adaptive_avg_pool3d", "input, output_size", "adaptive_avg_pool3d", adaptivePoolSizeFix },
        { "adaptive_max_pool1d", "input, output_size, ~return_indices=False", "adaptive_max_pool1d", adaptiveMaxAdapter },
        { "adaptive_max_pool2d", "input, output_size, ~return_indices=False", "adaptive_max_pool2d", adaptiveMaxAdapter },
        { "interpolate",
          "input, ~size=None, ~scale_factor=None, ~mode='nearest', ~align_corners=None, ~recompute_scale_factor=None, ~antialias=False",
          "upsample_nearest2d", interpolateAdapter },
        { "upsample",
          "input, ~size=None, ~scale_factor=None, ~mode='nearest', ~align_corners=None",
          "upsample_nearest2d", interpolateAdapter },
        { "pad", "input, pad, mode='constant', value=None", "pad" },
        { "one_hot", "tensor, num_classes=-1", "one_hot", oneHotAdapter },
        { "cosine_similarity", "x1, x2, dim=1, eps=1e-08", "cosine_similarity" },
        { "pairwise_distance", "x1, x2, p=2.0, eps=1e-06, keepdim=False", "pairwise_distance" },
        { "pixel_shuffle", "input, upscale_factor", "pixel_shuffle" },
        { "unfold", "input, kernel_size, dilation=1, padding=0, stride=1", "im2col" },
    };
    return defs;
}

const std::map<std::string, ParsedFunctional>& functionalTable()
{
    static const std::map<std::string, ParsedFunctional> table = [] {
        std::map<std::string, ParsedFunctional> t;
        for (const FunctionalDef& d : functionalDefs())
            t.emplace(d.name, ParsedFunctional { &d, parseSignature(d.signature) });
        return t;
    }();
    return table;
}

Bound bindPython(const std::string& name, const std::vector<Param>& params, const PyArgs& args, const PyKwargs& kwargs)
{
    Bound b;
    if (args.size() > params.size())
        throw ReplayError(name + "() takes " + std::to_string(params.size()) + " positional arguments but "
                          + std::to_string(args.size()) + " were given");
    std::vector<const PyValue*> given(params.size(), nullptr);
    for (std::size_t k = 0; k < args.size(); ++k)
        given[k] = &args[k];
    for (const auto& [key, value] : kwargs) {
        const auto it = std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == key; });
        if (it == params.end())
            throw ReplayError(name + "() got an unexpected keyword argument '" + key + "'");
        const auto index = static_cast<std::size_t>(it - params.begin());
        if (given[index])
            throw ReplayError(name + "() got multiple values for argument '" + key + "'");
        given[index] = &value;
    }
    for (std::size_t k = 0; k < params.size(); ++k) {
        if (given[k])
            b.named.emplace_back(params[k].name, *given[k]);
        else if (params[k].defaultValue)
            b.named.emplace_back(params[k].name, *params[k].defaultValue);
        else
            throw ReplayError(name + "() missing required argument: '" + params[k].name + "'");
    }
    return b;
}

} // namespace probescope::runuttorch::detail
