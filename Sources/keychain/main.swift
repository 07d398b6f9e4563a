import Foundation
import KeychainCLI

exit(KeychainCommand.run(Array(CommandLine.arguments.dropFirst())))
