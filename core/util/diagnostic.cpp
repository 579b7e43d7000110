// SPDX-License-Identifier: Apache-2.0
#include "core/util/diagnostic.h"

#include <algorithm>

namespace probescope {

namespace {
const char* severityText(Severity severity)
{
    switch (severity) {
    case Severity::Info:
        return "note";
    case Severity::Warning:
        return "warning";
    case Severity::Error:
        return "error";
    }
    return "error";
}
} // namespace

SourceLocation fileLocation(const std::filesystem::path& file)
{
    return SourceLocation { file.string(), std::nullopt, 0, 0 };
}

std::string Diagnostic::format() const
{
    std::string out = location.file.empty() ? std::string("<input>") : location.file;
    if (location.line > 0) {
        out += ':' + std::to_string(location.line);
        if (location.column > 0)
            out += ':' + std::to_string(location.column);
    } else if (location.offset) {
        out += ":byte " + std::to_string(*location.offset);
    }
    out += ": ";
    out += severityText(severity);
    out += " [" + id + "]: " + message;
    return out;
}

Diagnostic makeError(std::string id, SourceLocation location, std::string message)
{
    return Diagnostic { Severity::Error, std::move(id), std::move(location), std::move(message) };
}

Diagnostic makeWarning(std::string id, SourceLocation location, std::string message)
{
    return Diagnostic { Severity::Warning, std::move(id), std::move(location), std::move(message) };
}

bool hasErrors(const Diagnostics& diagnostics)
{
    return std::any_of(diagnostics.begin(), diagnostics.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

} // namespace probescope
