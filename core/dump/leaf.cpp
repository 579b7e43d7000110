// SPDX-License-Identifier: Apache-2.0
#include "core/dump/leaf.h"

#include <cstdlib>
#include <string>

namespace probescope::dump {

StatValue StatValue::from(std::optional<JsonValue> v)
{
    StatValue s;
    if (!v)
        return s;
    switch (v->type()) {
    case JsonType::Null:
        s.kind = Kind::Null;
        break;
    case JsonType::Bool:
        s.kind = Kind::Bool;
        s.integer = v->asBool() ? 1 : 0;
        s.number = static_cast<double>(s.integer);
        break;
    case JsonType::Int:
        s.kind = Kind::Int;
        s.integer = v->asInt();
        s.number = static_cast<double>(s.integer);
        break;
    case JsonType::Double:
        s.kind = Kind::Float;
        s.number = v->asDouble();
        break;
    case JsonType::String:
        s.kind = Kind::String;
        s.text = v->asString();
        break;
    case JsonType::Array:
    case JsonType::Object:
        s.kind = Kind::String; // not a statistic; keeps the kind honest for callers that print it
        break;
    }
    return s;
}

namespace {

bool isTensorType(std::string_view type)
{
    // torch.Tensor, mindspore.Tensor, torch.distributed.tensor.DTensor, FakeTensor, numpy.ndarray, ...
    return type.find("Tensor") != std::string_view::npos || type == "numpy.ndarray";
}

bool isStatType(JsonType t)
{
    return t == JsonType::Null || t == JsonType::Bool || t == JsonType::Int || t == JsonType::Double
        || t == JsonType::String;
}

bool isNumberText(std::string_view text)
{
    if (text.empty() || text.size() > 64)
        return false;
    if (text == "None")
        return true;
    const std::string copy(text);
    char* end = nullptr;
    std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size();
}

} // namespace

std::optional<LeafKind> classifyLeaf(JsonValue value)
{
    switch (value.type()) {
    case JsonType::Null:
        return LeafKind::Null;
    case JsonType::Object:
        break;
    default:
        return std::nullopt;
    }
    if (const auto cls = value.find("class_type"); cls && cls->asString() == "torch.distributed.P2POp")
        return LeafKind::P2POp;
    const auto type = value.find("type");
    if (!type || !type->isString())
        return std::nullopt;
    const std::string_view t = type->asString();
    if (isTensorType(t))
        return LeafKind::Tensor;
    if (t == "slice")
        return LeafKind::Slice;
    if (t == "ellipsis")
        return LeafKind::Ellipsis;
    if (t == "torch.Size")
        return LeafKind::Size;
    if (t == "torch.dtype")
        return LeafKind::DType;
    if (t == "torch.device")
        return LeafKind::Device;
    if (value.find("dtype") && value.find("shape"))
        return LeafKind::Tensor;
    if (value.find("value"))
        return LeafKind::Scalar;
    return LeafKind::Other;
}

namespace {

// The fields readTensorLeaf reads, found in one pass over the leaf's members (the last duplicate wins, as
// find() would give) instead of a search per field: this runs for every tensor of every dump read.
struct TensorFields
{
    std::optional<JsonValue> type, dtype, shape, stats[4], requiresGrad, dataName, md5;

    explicit TensorFields(JsonValue value)
    {
        for (std::uint32_t i = 0; i < value.size(); ++i) {
            const std::string_view key = value.keyAt(i);
            std::optional<JsonValue>* slot = nullptr;
            switch (key.size()) {
            case 3:
                slot = key == "Max" ? &stats[0] : key == "Min" ? &stats[1] : key == "md5" ? &md5 : nullptr;
                break;
            case 4:
                slot = key == "type" ? &type : key == "Mean" ? &stats[2] : key == "Norm" ? &stats[3] : nullptr;
                break;
            case 5: slot = key == "dtype" ? &dtype : key == "shape" ? &shape : nullptr; break;
            case 9: slot = key == "data_name" ? &dataName : nullptr; break;
            case 13: slot = key == "requires_grad" ? &requiresGrad : nullptr; break;
            default: break;
            }
            if (slot)
                *slot = value.at(i);
        }
    }
};

} // namespace

std::optional<TensorLeaf> readTensorLeaf(JsonValue value, std::string* error)
{
    auto fail = [&](std::string message) -> std::optional<TensorLeaf> {
        if (error)
            *error = std::move(message);
        return std::nullopt;
    };
    if (!value.isObject())
        return fail("a tensor must be an object");
    const TensorFields fields(value);
    TensorLeaf leaf;
    if (const auto& t = fields.type; t && t->isString())
        leaf.type = t->asString();
    if (const auto& d = fields.dtype) {
        if (!d->isString())
            return fail("\"dtype\" must be a string");
        leaf.dtype = d->asString();
    }
    if (const auto& s = fields.shape) {
        if (!s->isArray())
            return fail("\"shape\" must be a list of integers");
        leaf.shape.reserve(s->size());
        for (std::uint32_t i = 0; i < s->size(); ++i) {
            const JsonValue dim = s->at(i);
            if (!dim.isInt() || dim.asInt() < 0)
                return fail("\"shape\" must be a list of non-negative integers (element " + std::to_string(i)
                            + " is not)");
            leaf.shape.push_back(dim.asInt());
        }
    }
    static constexpr std::string_view statNames[] = { "Max", "Min", "Mean", "Norm" };
    StatValue* stats[] = { &leaf.max, &leaf.min, &leaf.mean, &leaf.norm };
    for (int i = 0; i < 4; ++i) {
        const auto& v = fields.stats[i];
        if (v && !isStatType(v->type())) {
            std::string message(1, '"');
            message.append(statNames[i]);
            message += "\" must be a number or null";
            return fail(std::move(message));
        }
        // Some versions write a statistic as text ("inf", "nan", "1.5"); any other text is not a number.
        if (v && v->isString() && !isNumberText(v->asString())) {
            std::string message(1, '"');
            message.append(statNames[i]);
            message += "\" must be a number or null (it is text that is not a number)";
            return fail(std::move(message));
        }
        *stats[i] = StatValue::from(v);
    }
    if (const auto& rg = fields.requiresGrad; rg && !rg->isNull()) {
        if (!rg->isBool())
            return fail("\"requires_grad\" must be true or false");
        leaf.requiresGrad = rg->asBool();
    }
    if (const auto& dn = fields.dataName; dn && !dn->isNull()) {
        if (!dn->isString())
            return fail("\"data_name\" must be a string");
        leaf.dataName = dn->asString();
    }
    if (const auto& md5 = fields.md5; md5 && !md5->isNull()) {
        if (!md5->isString())
            return fail("\"md5\" must be a string");
        leaf.md5 = md5->asString();
    }
    return leaf;
}

namespace {

struct Walker
{
    const std::function<bool(const LeafPath&, JsonValue, LeafKind)>& visit;
    std::uint32_t maxDepth;
    LeafPath path;

    // Returns false to stop.
    bool walk(JsonValue v, std::uint32_t depth)
    {
        if (const auto kind = classifyLeaf(v))
            return visit(path, v, *kind);
        if (depth >= maxDepth)
            return true;
        const bool isArray = v.isArray();
        if (!isArray && !v.isObject())
            return true; // bare scalars outside a leaf are not data (e.g. "is_recompute": false)
        const std::size_t saved = path.path.size();
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            if (!path.path.empty())
                path.path += '.';
            if (isArray)
                path.path += std::to_string(i);
            else
                path.path += v.keyAt(i);
            const bool go = walk(v.at(i), depth + 1);
            path.path.resize(saved);
            if (!go)
                return false;
        }
        return true;
    }
};

} // namespace

void forEachLeaf(JsonValue entryValue, const std::function<bool(const LeafPath&, JsonValue, LeafKind)>& visit,
                 std::uint32_t maxDepth)
{
    Walker walker { visit, maxDepth, {} };
    if (entryValue.isObject() && !classifyLeaf(entryValue)) {
        for (std::uint32_t i = 0; i < entryValue.size(); ++i) {
            walker.path.field = entryValue.keyAt(i);
            walker.path.path.clear();
            if (!walker.walk(entryValue.at(i), 1))
                return;
        }
        return;
    }
    walker.walk(entryValue, 0);
}

} // namespace probescope::dump
