import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Switching to `keychain serve` as the ordinary user who does it: the daemon's `/proc`
/// entries are closed to its own user, so what the commands know of it comes from the bus.
@Suite(
    "switching providers as an ordinary user",
    .enabled(if: ServedVault.unavailableReason == nil, "\(ServedVault.unavailableReason ?? "")"),
    .enabled(if: OrdinaryUser.unavailableReason == nil, "\(OrdinaryUser.unavailableReason ?? "")"))
struct SwitchAsUserTests {
    @Test("migrate --foreign, run by the ordinary user, refuses both ways while keychain serve of this same vault owns the name, and every item stays served")
    func refusesItsOwnVaultAsOrdinaryUser() throws {
        let session = try OrdinaryUserSession()
        try session.startServing()
        #expect(session.waitForProvider())
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=first", "service", "self", "n", "1"], input: "mine-1").status == 0)
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=second", "service", "self", "n", "2"], input: "mine-2").status == 0)

        let into = try session.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--conflict", "replace"])
        #expect(into.status != 0, "\(into.stderr)")
        #expect(into.stderr.contains("serving this same vault"), "\(into.stderr)")
        let back = try session.keychain(["migrate", "--foreign", "--from", "vault", "--to", "secret-service"])
        #expect(back.status != 0, "\(back.stderr)")
        #expect(back.stderr.contains("serving this same vault"), "\(back.stderr)")
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "n", "1"]).output == "mine-1")
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "n", "2"]).output == "mine-2")

        // serve says the same of a second start, from the bus's answer.
        let again = try session.keychain(["serve"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("keychain serve of this vault (process \(session.servePID)) already serves"), "\(again.stderr)")
    }

    @Test("keychain status never starts a provider: with keychain serve installed for activation, the name stays without an owner, and status says so")
    func statusStartsNothing() throws {
        let session = try OrdinaryUserSession()
        #expect(try session.keychain(["serve", "--install"]).status == 0)
        let status = try session.keychain(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.output.contains("no provider running"), "\(status.output)")
        #expect(!session.nameHasOwner())
        let json = try session.keychain(["status", "--json"])
        #expect(json.output.contains("no provider running"), "\(json.output)")
        #expect(!session.nameHasOwner())

        // Once a program's call started it, status names it and its vault.
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=t", "service", "s"], input: "v").status == 0)
        let serving = try session.keychain(["status"])
        #expect(serving.output.contains("secret service:    keychain serve of \(session.vaultPath) (process "), "\(serving.output)")
        #expect(serving.output.contains("default collection 'Login' is unlocked"), "\(serving.output)")
    }

    @Test(
        "serve --install makes the very next call on the running bus reach keychain serve, though the bus had read another provider's activation file before"
    )
    func installTakesOnTheRunningBus() throws {
        let other = "/other.keychain"
        // The machine's provider: the user's keychain serving another vault.
        let session = try OrdinaryUserSession { keychain, home in "\(keychain) serve --vault \(home)\(other)" }
        // A first call starts the machine's provider: the bus has read its file.
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=old", "service", "old"], input: "old").status == 0)
        #expect(session.servedVaultPath() == session.directory.path + other)
        if let old = session.ownerProcessID() { kill(old, SIGTERM) }
        for _ in 0..<400 where session.nameHasOwner() { usleep(25_000) }

        let installed = try session.keychain(["serve", "--install"])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stderr.contains("its next Secret Service call starts keychain serve"), "\(installed.stderr)")
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=new", "service", "new"], input: "new").status == 0)
        #expect(session.servedVaultPath() == session.vaultPath)
        if let served = session.ownerProcessID() { kill(served, SIGTERM) }
    }
}
