#pragma once
// Options for rtm's commands: an INI configuration file (--config) whose
// "[section] key = value" lines are the options "section.key", with the same options
// on the command line taking precedence. Boost.Program_options does the parsing.
// Paths are relative to the working directory.
#include <string>

#include <boost/program_options.hpp>

namespace rtm::app {

namespace po = boost::program_options;

// Parses argv (after the command name) and the --config file into `vm`. Returns
// false when --help was asked for (the help text, with `usage` on top, is printed).
// Unknown options and bad values throw rtm::Error naming the option (and the file).
bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   po::variables_map& vm);

}  // namespace rtm::app
