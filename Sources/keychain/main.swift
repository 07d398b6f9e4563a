import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import KeychainCLI

exit(KeychainCommand.main())
