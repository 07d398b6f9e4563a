import FoundationEssentials
import KeychainCLI

#if canImport(Glibc)
    import Glibc
#endif

exit(KeychainCommand.main())
