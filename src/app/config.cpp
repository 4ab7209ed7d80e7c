#include "app/config.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "parallel/world.h"

namespace rtm::app {

namespace {

// What the command line holds beyond this command's options: an option it does not have
// (another command's, or a typo) or a bare argument (a forgotten --config, most often).
// Refused rather than ignored: an ignored option is a setting the user believes in.
void refuse_strays(const po::parsed_options& parsed, const std::string& command,
                   const po::options_description& others) {
    for (const auto& o : parsed.options) {
        if (o.position_key >= 0) {
            const std::string arg = o.value.empty() ? "" : o.value.front();
            if (std::filesystem::path(arg).extension() == ".ini")
                fail_usage("command line", "'" + arg + "' is not an option",
                           "Did you mean --config " + arg + "? (the configuration file comes after --config)");
            fail_usage("command line", "'" + arg + "' is not an option (" + command + " takes its files through options)",
                       "See " + command + " --help");
        }
        if (!o.unregistered) continue;
        if (others.find_nothrow(o.string_key, false))
            fail_usage("option " + o.string_key, command + " does not use it (it belongs to another rtm command)",
                       "Remove it, or run the command it belongs to");
        fail_usage("option " + o.string_key, "unknown to " + command, "See " + command + " --help for its options");
    }
}

// The INI parser ends every line at its first '#' (a comment), so "shots = run#2.sgy"
// would read as "run" without a word (and write there). A '#' that follows a space or
// begins a line is a comment, as users write them; one inside a word is refused, naming
// the line. A byte-order mark, invisible in the parser's message, is named too.
void refuse_cut_values(const std::string& path, const std::string& text) {
    if (text.rfind("\xEF\xBB\xBF", 0) == 0)
        fail_usage(path, "begins with a UTF-8 byte-order mark, which the INI parser reads as part of the first line",
                   "Save the file as UTF-8 without a byte-order mark");
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        // Many INI dialects start comments with ';': Boost's takes it for an option line and
        // names no line.
        if (const std::size_t first = line.find_first_not_of(" \t"); first != std::string::npos && line[first] == ';')
            fail_usage(path + ", line " + std::to_string(n), "'" + line + "': a ';' starts no comment here",
                       "Start comments with '#'");
        for (std::size_t at = line.find('#'); at != std::string::npos; at = line.find('#', at + 1)) {
            const std::size_t first = line.find_first_not_of(" \t");
            if (at == first) break;  // a comment line
            if (line[at - 1] == ' ' || line[at - 1] == '\t') break;  // a comment after the value
            fail_usage(path + ", line " + std::to_string(n),
                       "'" + line + "' has a '#' inside a value, where the INI format starts a comment: the value "
                       "would be cut at it",
                       "Put a space before a comment's '#'; for a path with '#' in it, rename it or give that "
                       "option on the command line");
        }
    }
}

// The text of the --config file `path`. Refused: what cannot be read, a folder (which
// would read as an empty file: a job of defaults), and a file that is not text (a SEG-Y
// file given by mistake, whose EBCDIC header the INI parser would print as one invalid
// line of kilobytes): a NUL or another control character than tab, line and page ends.
// Read in pieces and checked as it comes, so a shots file of gigabytes is refused at its
// first binary byte.
std::string config_text(const std::string& path) {
    if (std::filesystem::is_directory(path))
        fail(path, "is a folder, not an INI configuration file", "Give --config the job's .ini file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot open the configuration file", "Check the --config path");
    const auto binary = [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f' && u != '\v';
    };
    std::string text;
    char piece[65536];
    while (in.read(piece, sizeof piece) || in.gcount() > 0) {
        const std::size_t n = std::size_t(in.gcount());
        if (const char* b = std::find_if(piece, piece + n, binary); b != piece + n)
            fail(path, "is not an INI text file (byte " + std::to_string(text.size() + std::size_t(b - piece) + 1) +
                           " is a binary value)",
                 "Give --config the job's .ini file of [section] key = value lines (a SEG-Y file goes to its own "
                 "option, e.g. model.vp)");
        text.append(piece, n);
    }
    if (in.bad()) fail(path, "a read of the configuration file failed", "Check the file and the disk");
    refuse_cut_values(path, text);
    return text;
}

}  // namespace

namespace {

// Every rank of a job runs the same job. mpirun's MPMD form (`-np 2 rtm migrate ... :
// -np 2 rtm migrate ...`), or a configuration file that is another copy on another
// node's own disk, gave ranks different settings that wrote one job folder or shot file.
// Compared: every option's value as this rank has it (command line and file together),
// but propagation.threads: a rank's threads change no byte of its results, and nodes
// with other core counts may give their ranks other counts.
void same_job_on_every_rank(const po::variables_map& vm) {
    const parallel::World& world = parallel::World::get();
    if (world.size() == 1) return;
    // Every option's value as text, a line each ("key=value").
    std::ostringstream settings;
    settings.precision(17);
    for (const auto& [key, value] : vm) {
        if (key == "propagation.threads") continue;
        const boost::any& v = value.value();
        settings << key << '=';
        if (const auto* x = boost::any_cast<std::string>(&v)) settings << *x;
        else if (const auto* d = boost::any_cast<double>(&v)) settings << *d;
        else if (const auto* i = boost::any_cast<int>(&v)) settings << *i;
        else if (const auto* b = boost::any_cast<bool>(&v)) settings << (*b ? "true" : "false");
        else if (const auto* l = boost::any_cast<std::vector<std::string>>(&v))
            for (std::size_t k = 0; k < l->size(); ++k) settings << (k ? " " : "") << (*l)[k];
        else settings << "(a value of type " << v.type().name() << ")";  // an option type added: compared by name only
        settings << '\n';
    }
    // Hashes on every rank; the texts, only when they differ, on rank 0, which names the
    // first option that differs and says it for all.
    const std::string text = settings.str();
    const std::uint64_t mine = std::hash<std::string>{}(text);
    const auto all = world.allgather(&mine, sizeof mine);
    if (std::all_of(all.begin(), all.end(), [&](const std::vector<char>& h) { return h == all[0]; })) return;
    const std::vector<std::string> texts = world.gather(text);
    std::string message;
    if (world.root()) {
        std::vector<int> differ;
        for (std::size_t r = 1; r < all.size(); ++r)
            if (all[r] != all[0]) differ.push_back(int(r));
        const auto lines = [](const std::string& t) {
            std::map<std::string, std::string> m;
            std::istringstream in(t);
            for (std::string line; std::getline(in, line);) {
                const auto eq = line.find('=');
                m[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
            }
            return m;
        };
        const auto a = lines(texts[0]), b = lines(texts[std::size_t(differ[0])]);
        std::string first;  // the first option whose value differs, both values
        for (const auto& [key, value] : a)
            if (!b.count(key) || b.at(key) != value) {
                first = key + " is '" + value + "' on rank 0, " + (b.count(key) ? "'" + b.at(key) + "'" : "not given") +
                        " on rank " + std::to_string(differ[0]);
                break;
            }
        if (first.empty())
            for (const auto& [key, value] : b)
                if (!a.count(key)) {
                    first = key + " is not given on rank 0, '" + value + "' on rank " + std::to_string(differ[0]);
                    break;
                }
        std::string ranks;
        for (const int r : differ) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        message = (differ.size() > 1 ? "ranks " : "rank ") + ranks + " of " + std::to_string(world.size()) +
                  (differ.size() > 1 ? " were" : " was") + " given other settings than rank 0 (" + first + ")";
    }
    world.broadcast(message);
    const std::string config = vm.count("config") ? vm["config"].as<std::string>() : "";
    fail_usage("command line", message + (config.empty() ? "" : ", from its command line or its copy of " + config),
               "Give every rank the same command (not mpirun's MPMD form with different options)" +
                   std::string(config.empty() ? "" : ", and the configuration file on storage every node sees"));
}

}  // namespace

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   const po::options_description& others, po::variables_map& vm) {
    const std::string command = std::string("rtm ") + argv[0];
    po::options_description common("General");
    common.add_options()
        ("help,h", "show this help")
        ("config,c", input_file(), "INI configuration file; its [section] key = value "
                                   "lines are the options section.key below, and "
                                   "options on the command line take precedence. One file "
                                   "may hold several commands' jobs: a command skips the "
                                   "other commands' options");
    po::options_description all;
    all.add(common).add(desc);
    desc.add(common);  // the caller's input_files include the configuration file
    try {
        const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).allow_unregistered().run();
        po::store(parsed, vm);
        if (vm.count("help")) {
            std::cout << usage << "\n" << all << "\n";
            return false;
        }
        refuse_strays(parsed, command, others);
        if (vm.count("config")) {
            const std::string path = vm["config"].as<std::string>();
            std::istringstream in(config_text(path));
            try {
                const po::parsed_options file = po::parse_config_file(in, all, true);
                for (const auto& o : file.options) {
                    // (These are read from the command line alone: in a file they were ignored.)
                    if (o.string_key == "config" || o.string_key == "help")
                        fail_usage(path, "'" + o.string_key + "' is an option of the command line alone: a "
                                   "configuration file neither includes another nor asks for help",
                                   "Remove it from the file (give the options of both files in one, or the other "
                                   "file's options on the command line)");
                    if (!o.unregistered) continue;
                    if (!others.find_nothrow(o.string_key, false))
                        fail_usage(path, "unknown option '" + o.string_key + "'",
                                   "Check its [section] and key against " + command + " --help");
                    spdlog::debug("{}: {} ignores {} (an option of another rtm command)", path, command, o.string_key);
                }
                po::store(file, vm);
            } catch (const po::error& e) {
                fail_usage(path, e.what(), "See " + command + " --help for the options and their sections");
            }
        }
        po::notify(vm);
    } catch (const po::error& e) {
        fail_usage("command line", e.what(), "See " + command + " --help");
    }
    same_job_on_every_rank(vm);
    // An input given as nothing (`--model.epsilon ""`, `epsilon =` in a file) was taken as
    // not given (an isotropic run) or as a file named "" (named by no option).
    for (const auto& [key, value] : input_values(desc, vm))
        if (value.empty()) fail_usage("option " + key, "is empty", "Give it a value, or leave the option out");
    return true;
}

std::vector<std::pair<std::string, std::string>> input_values(const po::options_description& desc,
                                                              const po::variables_map& vm) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& o : desc.options()) {
        const std::string& key = o->long_name();
        if (!vm.count(key)) continue;
        const auto* semantic = o->semantic().get();
        if (dynamic_cast<const InputFileValue<std::string>*>(semantic)) out.emplace_back(key, vm[key].as<std::string>());
        else if (dynamic_cast<const InputFileValue<std::vector<std::string>>*>(semantic))
            for (const auto& p : vm[key].as<std::vector<std::string>>()) out.emplace_back(key, p);
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> input_files(const po::options_description& desc,
                                                             const po::variables_map& vm) {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& [key, path] : input_values(desc, vm))
        if (std::filesystem::is_regular_file(path)) out.emplace_back(std::move(key), std::move(path));
    return out;
}

}  // namespace rtm::app
