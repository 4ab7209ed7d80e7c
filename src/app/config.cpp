#include "app/config.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <spdlog/spdlog.h>

#include "core/error.h"

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
                fail("command line", "'" + arg + "' is not an option",
                     "Did you mean --config " + arg + "? (the configuration file comes after --config)");
            fail("command line", "'" + arg + "' is not an option (" + command + " takes its files through options)",
                 "See " + command + " --help");
        }
        if (!o.unregistered) continue;
        if (others.find_nothrow(o.string_key, false))
            fail("option " + o.string_key, command + " does not use it (it belongs to another rtm command)",
                 "Remove it, or run the command it belongs to");
        fail("option " + o.string_key, "unknown to " + command, "See " + command + " --help for its options");
    }
}

}  // namespace

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   const po::options_description& others, po::variables_map& vm) {
    const std::string command = std::string("rtm ") + argv[0];
    po::options_description common("General");
    common.add_options()
        ("help,h", "show this help")
        ("config,c", po::value<std::string>(), "INI configuration file; its [section] key = value "
                                               "lines are the options section.key below, and "
                                               "options on the command line take precedence. One file "
                                               "may hold several commands' jobs: a command skips the "
                                               "other commands' options");
    po::options_description all;
    all.add(common).add(desc);
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
            std::ifstream in(path);
            if (!in) fail(path, "cannot open the configuration file", "Check the --config path");
            try {
                const po::parsed_options file = po::parse_config_file(in, all, true);
                for (const auto& o : file.options) {
                    if (!o.unregistered) continue;
                    if (!others.find_nothrow(o.string_key, false))
                        fail(path, "unknown option '" + o.string_key + "'",
                             "Check its [section] and key against " + command + " --help");
                    spdlog::debug("{}: {} ignores {} (an option of another rtm command)", path, command, o.string_key);
                }
                po::store(file, vm);
            } catch (const po::error& e) {
                fail(path, e.what(), "See " + command + " --help for the options and their sections");
            }
        }
        po::notify(vm);
    } catch (const po::error& e) {
        fail("command line", e.what(), "See " + command + " --help");
    }
    return true;
}

}  // namespace rtm::app
