// SPDX-License-Identifier: Apache-2.0
#include "core/compare/input/jsoninput.h"

#include "core/util/fileio.h"
#include "core/util/textposition.h"

namespace probescope::compare {

Result<nlohmann::json> readJsonObjectFile(const std::filesystem::path& path, std::string_view what)
{
    const SourceLocation file = fileLocation(path);
    auto text = readTextFile(path);
    if (!text)
        return makeError("compare.input", file, "cannot open the compare.json file");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann counts bytes from 1 and reports the byte after the offending one.
        const std::uint64_t offset = e.byte > 1 ? e.byte - 1 : 0;
        std::string message = e.what();
        if (const auto colon = message.rfind(": "); colon != std::string::npos)
            message = message.substr(colon + 2);
        return makeError("compare.input", locate(*text, offset, path.string()), "not valid JSON: " + message);
    } catch (const nlohmann::json::exception& e) {
        // Not a syntax error but still no document: a number past double's range (1e400) is out_of_range 406,
        // which escaped as an abort (found by fuzz_comparejson, issue 25).
        std::string message = e.what();
        if (const auto bracket = message.find("] "); bracket != std::string::npos)
            message = message.substr(bracket + 2);
        return makeError("compare.input", file, "not valid JSON: " + message);
    }
    if (!j.is_object())
        return makeError("compare.input", file, "compare.json must hold an object" + std::string(what));
    return j;
}

} // namespace probescope::compare
