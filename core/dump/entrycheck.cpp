// SPDX-License-Identifier: Apache-2.0
#include "core/dump/entrycheck.h"

#include "core/util/textposition.h"

#include <array>

namespace probescope::dump {

namespace {

// The keys of API and module entries in every msprobe version of the fixtures (1.x to 26.x, PyTorch and
// MindSpore), plus the backward names some versions use.
constexpr std::array<std::string_view, 9> kKnownEntryKeys {
    "input_args", "input_kwargs", "output", "input", "parameters", "is_recompute", "grad_input", "grad_output",
    "requires_grad",
};

bool isKnownKey(std::string_view key)
{
    for (const std::string_view k : kKnownEntryKeys) {
        if (k == key)
            return true;
    }
    return false;
}

/// Cuts a quoted name so that a 50 MB key cannot make a 50 MB message.
std::string shortName(std::string_view name)
{
    constexpr std::size_t kMax = 200;
    if (name.size() <= kMax)
        return std::string(name);
    return std::string(name.substr(0, kMax)) + "... (" + std::to_string(name.size()) + " bytes)";
}

class Checker
{
public:
    Checker(const DumpFile& dump, std::string_view text, Diagnostics& out, std::size_t maxReports)
        : m_file(dump.path.string())
        , m_text(text)
        , m_out(out)
        , m_max(maxReports)
    {
    }

    void entry(const Entry& e)
    {
        if (!e.value.isObject()) {
            report(true, "dump.entry-type", e.value.offset(),
                   "entry \"" + shortName(e.key) + "\" must be an object of inputs and outputs");
            return;
        }
        const bool apiOrModule = e.name.kind == EntryKind::Api || e.name.kind == EntryKind::Module;
        for (std::uint32_t i = 0; i < e.value.size(); ++i) {
            const std::string_view key = e.value.keyAt(i);
            const JsonValue v = e.value.at(i);
            if (apiOrModule && !isKnownKey(key))
                report(false, "dump.unknown-key", v.offset(),
                       "entry \"" + shortName(e.key) + "\" has the unknown key \"" + shortName(key)
                           + "\"; its data is not read (known: input_args, input_kwargs, output, input, parameters)");
            if ((key == "input_args" || key == "output" || key == "input") && !v.isArray() && !v.isNull()
                && !v.isObject())
                report(true, "dump.entry-type", v.offset(),
                       "entry \"" + shortName(e.key) + "\": \"" + std::string(key) + "\" must be a list");
            if (key == "input_kwargs" && !v.isObject() && !v.isNull())
                report(true, "dump.entry-type", v.offset(),
                       "entry \"" + shortName(e.key) + "\": \"input_kwargs\" must be an object");
            walk(e, v, 0);
        }
    }

    void finish()
    {
        if (m_count > m_max)
            m_out.push_back(makeError("dump.entry-type", SourceLocation { m_file, std::nullopt, 0, 0 },
                                      std::to_string(m_count - m_max) + " more problems with the entries' structure"));
    }

private:
    // Leaves are objects with a "type"; a non-string "type" makes the object look like a container,
    // and its tensor would silently vanish from the compare.
    void walk(const Entry& e, JsonValue v, std::uint32_t depth)
    {
        if (depth > 64 || (!v.isObject() && !v.isArray()))
            return;
        if (v.isObject()) {
            if (const auto type = v.find("type"); type && !type->isString()) {
                report(true, "dump.leaf-type", type->offset(),
                       "entry \"" + shortName(e.key) + "\": \"type\" must be a string");
                return;
            }
        }
        for (std::uint32_t i = 0; i < v.size(); ++i)
            walk(e, v.at(i), depth + 1);
    }

    void report(bool error, const char* id, std::uint64_t offset, std::string message)
    {
        if (++m_count > m_max)
            return;
        const SourceLocation where = locate(m_text, offset, m_file);
        m_out.push_back(error ? makeError(id, where, std::move(message)) : makeWarning(id, where, std::move(message)));
    }

    std::string m_file;
    std::string_view m_text;
    Diagnostics& m_out;
    std::size_t m_max;
    std::size_t m_count = 0;
};

} // namespace

void checkEntryStructure(const DumpFile& dump, std::string_view text, Diagnostics& out, std::size_t maxReports)
{
    if (dump.format != DumpFormat::DumpJson)
        return; // debug.json values are any value; legacy rows are checked by their reader
    Checker checker(dump, text, out, maxReports);
    for (const Entry& e : dump.entries)
        checker.entry(e);
    checker.finish();
}

} // namespace probescope::dump
