// SPDX-License-Identifier: Apache-2.0
// What every profile's table shares: its columns by name, msprobe 1.2.2's header of a mode, and the mode of a pair.
#include "core/compare/table/comparetable.h"

#include "core/compare/table/pytext.h"

namespace probescope::compare {

using dump::JsonValue;

int CompareTable::column(std::string_view name) const
{
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (header[i] == name)
            return static_cast<int>(i);
    }
    return -1;
}

std::vector<std::string> headerFor(CompareMode mode, bool stackMode)
{
    std::vector<std::string> h = { "NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                                   "Bench Tensor Shape" };
    switch (mode) {
    case CompareMode::RealData:
        h.insert(h.end(), { "Cosine", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                            "Five Thousandths Err Ratio", "NPU max", "NPU min", "NPU mean", "NPU l2norm", "Bench max",
                            "Bench min", "Bench mean", "Bench l2norm", "Accuracy Reached or Not", "Err_message" });
        if (stackMode)
            h.push_back("NPU_Stack_Info");
        h.push_back("Data_name");
        break;
    case CompareMode::Summary:
        h.insert(h.end(), { "Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
                            "MeanRelativeErr", "NormRelativeErr", "NPU max", "NPU min", "NPU mean", "NPU l2norm",
                            "Bench max", "Bench min", "Bench mean", "Bench l2norm", "Result", "Err_message" });
        if (stackMode)
            h.push_back("NPU_Stack_Info");
        break;
    case CompareMode::Md5:
        h.insert(h.end(), { "NPU MD5", "BENCH MD5", "Result" });
        if (stackMode)
            h.push_back("NPU_Stack_Info");
        break;
    }
    return h;
}

namespace {

// msprobe 1.2.2 md5 detection (compare-spec §2.6 [A]): Python's `"md5" in v` on each entry field.
bool containsMd5(JsonValue v)
{
    switch (v.type()) {
    case dump::JsonType::Object:
        return v.find("md5").has_value();
    case dump::JsonType::Array:
        for (std::uint32_t i = 0; i < v.size(); ++i) {
            if (v.at(i).isString() && v.at(i).asString() == "md5")
                return true;
        }
        return false;
    case dump::JsonType::String:
        return v.asString().find("md5") != std::string_view::npos;
    default:
        return false;
    }
}

bool hasMd5(const dump::DumpFile& dump)
{
    // Keys are interned per document: a document where no member is called "md5" has none to find,
    // which spares statistics dumps a walk over every leaf.
    bool anyMd5Key = false;
    const dump::JsonDocument* seen = nullptr;
    for (const dump::Entry& e : dump.entries) {
        const dump::JsonDocument* d = e.value.document();
        if (d == seen)
            continue;
        seen = d;
        anyMd5Key = anyMd5Key || !d || d->keyId("md5");
        if (anyMd5Key)
            break;
    }
    if (!anyMd5Key)
        return false;
    for (const dump::Entry& e : dump.entries) {
        if (!e.value.isObject())
            continue;
        for (std::uint32_t f = 0; f < e.value.size(); ++f) {
            const JsonValue field = e.value.at(f);
            if (field.isArray()) {
                for (std::uint32_t i = 0; i < field.size(); ++i) {
                    if (pyTruthy(field.at(i)) && containsMd5(field.at(i)))
                        return true;
                }
            }
            if (!field.isBool() && pyTruthy(field) && containsMd5(field))
                return true;
        }
    }
    return false;
}

} // namespace

Result<CompareMode> detectMode(const dump::DumpFile& npu, const dump::DumpFile& bench)
{
    const SourceLocation where = fileLocation(npu.path);
    if (npu.header.task.empty() || bench.header.task.empty())
        return makeError("compare.task", where, "both dump files need a \"task\"");
    if (npu.header.task != bench.header.task)
        return makeError("compare.task", where,
                         "the NPU dump has task \"" + npu.header.task + "\" but the bench dump has \""
                             + bench.header.task + "\"");
    if (npu.header.task == "tensor")
        return CompareMode::RealData;
    if (npu.header.task != "statistics")
        return makeError("compare.task", where, "compare applies only to task tensor or statistics, not \""
                                                    + npu.header.task + "\"");
    const bool a = hasMd5(npu);
    const bool b = hasMd5(bench);
    if (a != b)
        return makeError("compare.task", where, "one dump has md5 checksums and the other has not");
    return a ? CompareMode::Md5 : CompareMode::Summary;
}

} // namespace probescope::compare
