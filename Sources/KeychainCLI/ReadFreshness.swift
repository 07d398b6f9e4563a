import KeychainCore

/// What a read says when this boot's record of the vault's newest generation vanished after
/// the vault was written in this boot: what it printed may come from an older copy put back,
/// so it says so on standard error and does not exit 0. Writes are refused before this
/// (the vault's own check); `status`, `verify` and `restore` report it themselves.
enum ReadFreshness {
    /// The commands whose outcome is what they read from the vault's items.
    static let reads: Set<String> = ["get", "contains", "list", "export", "backup"]

    /// `code`, or a failure when the command read a vault whose freshness is unknown.
    static func checked(_ code: ExitCode, _ context: Context, command: String) -> ExitCode {
        guard code == .success || code == .notFound, saysUnvouched(context, command: command) else { return code }
        return .failure
    }

    /// A command's "not found", as a failure when the vault it read has a freshness unknown:
    /// the older copy put back may lack the item.
    static func checked(_ failure: CommandFailure, _ context: Context, command: String) -> CommandFailure {
        guard failure.code == .notFound, saysUnvouched(context, command: command) else { return failure }
        return CommandFailure(failure.message, code: .failure, command: failure.command)
    }

    /// Whether the command read a vault whose freshness is unknown; if so, says so.
    private static func saysUnvouched(_ context: Context, command: String) -> Bool {
        guard reads.contains(command), let vault = context.openedVault, vault.readsAreUnvouched else { return false }
        context.terminal.writeError(
            "keychain \(command): \(vault.location.path) was last written in this boot, but this boot's record of its newest generation is gone from the kernel keyring: what was read may come from an older copy put back; check the vault with keychain verify, then confirm this copy with keychain verify --accept\n"
        )
        return true
    }
}
