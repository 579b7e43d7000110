// SPDX-License-Identifier: Apache-2.0
#include "core/dump/rankdump.h"

#include "core/util/fileio.h"
#include "core/util/textposition.h"

namespace probescope::dump {

namespace fs = std::filesystem;

const std::string* ConstructMap::parent(std::string_view key) const
{
    const auto it = parentOf.find(std::string(key));
    return it == parentOf.end() ? nullptr : &it->second;
}

const std::vector<std::string>* StackMap::frames(std::string_view key) const
{
    const auto it = framesOf.find(std::string(key));
    return it == framesOf.end() ? nullptr : &it->second;
}

namespace {

struct LoadedJson
{
    std::shared_ptr<const MappedFile> file;
    std::shared_ptr<const JsonDocument> document;
};

Result<LoadedJson> loadJson(const fs::path& path)
{
    auto file = MappedFile::open(path, maxJsonFileBytes());
    if (!file)
        return file.error();
    auto parsed = JsonDocument::parse((*file)->text(), path.string());
    if (!parsed.document)
        return parsed.diagnostics.front();
    return LoadedJson { *file, parsed.document };
}

Diagnostic typeError(const LoadedJson& json, JsonValue at, std::string id, std::string message)
{
    return makeError(std::move(id), locate(json.file->text(), at.offset(), json.file->path().string()),
                     std::move(message));
}

// msprobe stack frames are strings; other shapes are kept readable rather than dropped.
std::vector<std::string> framesFrom(JsonValue list)
{
    std::vector<std::string> frames;
    for (std::uint32_t i = 0; i < list.size(); ++i) {
        const JsonValue f = list.at(i);
        if (f.isString()) {
            frames.emplace_back(f.asString());
        } else if (f.isArray()) {
            std::string joined;
            for (std::uint32_t k = 0; k < f.size(); ++k) {
                if (k)
                    joined += ", ";
                const JsonValue part = f.at(k);
                joined += part.isString() ? std::string(part.asString())
                                          : (part.isInt() ? std::to_string(part.asInt()) : std::string("?"));
            }
            frames.push_back(std::move(joined));
        }
    }
    return frames;
}

} // namespace

Result<ConstructMap> readConstructJson(const fs::path& path)
{
    auto json = loadJson(path);
    if (!json)
        return json.error();
    const JsonValue root = json->document->root();
    if (!root.isObject())
        return typeError(*json, root, "construct.type", "construct.json must hold an object of node -> parent");
    ConstructMap map;
    map.present = true;
    map.links.reserve(root.size());
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const std::string key(root.keyAt(i));
        JsonValue v = root.at(i);
        if (key == "megatron_micro_step_number") {
            if (v.isInt())
                map.megatronMicroSteps = v.asInt();
            continue;
        }
        // Megatron dumps write [parent, micro_step].
        if (v.isArray() && v.size() >= 1)
            v = v.at(0);
        std::string parent;
        if (v.isString())
            parent = std::string(v.asString());
        else if (!v.isNull())
            return typeError(*json, v, "construct.type",
                             "the parent of \"" + key + "\" must be a string or null");
        map.parentOf[key] = parent;
        map.links.emplace_back(key, std::move(parent));
    }
    return map;
}

namespace {

void fillStack(JsonValue root, StackMap& map)
{
    map.present = true;
    const auto zero = root.find("0");
    map.newForm = zero && zero->isArray() && zero->size() > 0;
    for (std::uint32_t i = 0; i < root.size(); ++i) {
        const JsonValue v = root.at(i);
        if (map.newForm) {
            // {"0": [[key1, key2, ...], [frames...]]}: identical stacks are stored once.
            if (!v.isArray() || v.size() != 2 || !v.at(0).isArray())
                continue;
            auto frames = framesFrom(v.at(1));
            const JsonValue keys = v.at(0);
            for (std::uint32_t k = 0; k < keys.size(); ++k) {
                if (keys.at(k).isString())
                    map.framesOf[std::string(keys.at(k).asString())] = frames;
            }
        } else if (v.isArray()) {
            map.framesOf[std::string(root.keyAt(i))] = framesFrom(v);
        }
    }
}

} // namespace

Result<StackMap> readStackJson(const fs::path& path)
{
    auto json = loadJson(path);
    if (!json)
        return json.error();
    const JsonValue root = json->document->root();
    if (!root.isObject())
        return typeError(*json, root, "stack.type", "stack.json must hold an object");
    StackMap map;
    fillStack(root, map);
    return map;
}

Result<std::shared_ptr<const RankDump>> loadRank(const RankLocation& location, const ReadOptions& options)
{
    auto rank = std::make_shared<RankDump>();
    rank->location = location;
    auto dump = location.format == DumpFormat::LegacyPkl ? readLegacyPkl(location.dumpFile, options)
                                                         : readDumpJson(location.dumpFile, options);
    if (!dump)
        return dump.error();
    rank->dump = *dump;
    rank->diagnostics = rank->dump->diagnostics;

    if (location.format == DumpFormat::LegacyPkl) {
        // The legacy reader keeps api_stack rows under a top-level "stack" object.
        if (const auto stack = rank->dump->document->root().find("stack"); stack && stack->isObject())
            fillStack(*stack, rank->stack);
        return std::shared_ptr<const RankDump>(std::move(rank));
    }
    std::error_code ec;
    if (const fs::path p = location.dir / "construct.json"; options.constructJson && fs::exists(p, ec)) {
        if (auto construct = readConstructJson(p))
            rank->construct = std::move(*construct);
        else
            rank->diagnostics.push_back(construct.error());
    }
    if (const fs::path p = location.dir / "stack.json"; fs::exists(p, ec) && !options.stackJson) {
        rank->stackDeferred = true;
    } else if (fs::exists(p, ec)) {
        if (auto stack = readStackJson(p))
            rank->stack = std::move(*stack);
        else
            rank->diagnostics.push_back(stack.error());
    }
    return std::shared_ptr<const RankDump>(std::move(rank));
}

Result<StackMap> readRankStack(const RankDump& rank)
{
    if (!rank.stackDeferred)
        return rank.stack;
    return readStackJson(rank.location.dir / "stack.json");
}

} // namespace probescope::dump
