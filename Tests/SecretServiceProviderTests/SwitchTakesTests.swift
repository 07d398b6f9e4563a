import Foundation
import KeychainServe
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension Trait where Self == ConditionTrait {
    /// Where a switch of providers can be tried as the ordinary user who makes it: the built
    /// `keychain`, gnome-keyring and its tools, and an ordinary user to run them as.
    static var switchable: Self {
        let missing = ServedVault.unavailableReason ?? PrivateSecretService.unavailableReason ?? OrdinaryUser.unavailableReason
        return .enabled(if: missing == nil, Comment(rawValue: missing ?? ""))
    }
}

/// A switch that takes, run as the ordinary user who makes it (whose own provider is the only
/// one a switch may stop): the very next call reaches `keychain serve`, and nothing a program
/// stores during the switch is left behind unsaid.
@Suite(
    "a switch to keychain serve takes on the running bus",
    .switchable)
struct SwitchTakesTests {
    /// The ordinary user's session with gnome-keyring (unlocked, the user's own process)
    /// owning the name, and a passphrase for the vault the switch fills.
    final class KeyringSession {
        let session: OrdinaryUserSession
        let keyring: pid_t

        init() throws {
            session = try OrdinaryUserSession()
            let passphrase = session.directory.path + "/passphrase"
            try "vault-passphrase\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
            let (uid, gid) = try OrdinaryUser.ids()
            chown(passphrase, uid, gid)
            let started = try session.run("/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--daemonize"], input: "test-password")
            #expect(started.status == 0, "\(started.stderr)")
            var owner: pid_t?
            for _ in 0..<400 where owner == nil {
                owner = session.ownerProcessID()
                if owner == nil { usleep(25_000) }
            }
            keyring = owner ?? 0
        }

        var passphraseEnvironment: [String: String] { ["KEYCHAIN_PASSPHRASE_FILE": session.directory.path + "/passphrase"] }

        func keychain(_ arguments: [String]) throws -> CommandResult {
            try session.run(session.keychain, arguments, environment: passphraseEnvironment)
        }

        func store(_ label: String, _ attributes: [String], _ secret: String) throws -> Int32 {
            try session.run("/usr/bin/secret-tool", ["store", "--label=\(label)"] + attributes, input: secret).status
        }

        func lookup(_ attributes: [String]) throws -> String {
            try session.run("/usr/bin/secret-tool", ["lookup"] + attributes).output
        }

        deinit {
            // Whatever serves at the end (the keychain serve the switch started), and gnome-keyring if it still runs.
            if let owner = session.ownerProcessID(), owner != keyring { kill(owner, SIGTERM) }
            // Only while that process id is still gnome-keyring's: the switch normally stopped it.
            if keyring > 0, (try? String(contentsOfFile: "/proc/\(keyring)/cmdline", encoding: .utf8))?.contains("gnome-keyring") == true { kill(keyring, SIGTERM) }
        }
    }

    /// Whether process `pid` has ended (gone, or a zombie that nobody reaped yet).
    static func hasEnded(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.contains(") Z ")
    }

    @Test("serve --install takes the name from another vault's keychain serve, which allows it: the very next call reaches this vault")
    func installReplacesAnotherVaultsServe() throws {
        let session = try OrdinaryUserSession()
        let other = session.directory.path + "/other.keychain"
        let old = try session.startServing(["--vault", other])
        #expect(session.waitForProvider())
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=old", "service", "old"], input: "old").status == 0)
        #expect(session.servedVaultPath() == other)

        let installed = try session.keychain(["serve", "--install"])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stderr.contains("took org.freedesktop.secrets from keychain serve of another vault (\(other), process \(old))"), "\(installed.stderr)")
        #expect(session.servedVaultPath() == session.vaultPath)
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=new", "service", "new"], input: "new").status == 0)
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "service", "new"]).output == "new")
        #expect(session.ownerProcessID() != old)
        if let served = session.ownerProcessID() { kill(served, SIGTERM) }
    }

    @Test(
        "migrate --foreign --switch from gnome-keyring, which never lets its name go: keychain serve waits for it, gnome-keyring is emptied and stopped, and the very next call reaches keychain serve with the moved items"
    )
    func switchFromGnomeKeyringTakes() throws {
        let setup = try KeyringSession()
        #expect(setup.keyring > 0)
        #expect(try setup.store("Deploy token", ["service", "api.example.com"], "s3cret") == 0)
        #expect(try setup.store("Mail", ["service", "mail"], "mail-pw") == 0)

        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(switched.stderr.contains("waits in the session bus's queue"), "\(switched.stderr)")
        #expect(switched.stderr.contains("switched: keychain serve of this vault"), "\(switched.stderr)")
        #expect(try setup.lookup(["service", "api.example.com"]) == "s3cret")
        #expect(try setup.lookup(["service", "mail"]) == "mail-pw")
        #expect(setup.session.servedVaultPath() == setup.session.vaultPath)
        #expect(Self.hasEnded(setup.keyring), "gnome-keyring still runs")

        // What an old provider kept is moved by running the switch again with it started again:
        // it waits in the queue behind keychain serve, and the switch finds it there.
        let again = try setup.session.run("/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--daemonize"], input: "test-password")
        #expect(again.status == 0, "\(again.stderr)")
        let queue = try setup.session.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.ListQueuedOwners", "string:org.freedesktop.secrets"])
        let queued = try #require(queue.output.split(separator: "\"").dropFirst().enumerated().filter { $0.offset % 2 == 0 }.map(\.element).last.map(String.init))
        let late = try setup.session.run(
            "/usr/bin/secret-tool", ["store", "--label=late", "service", "late"], input: "late-pw", environment: ["SECRET_SERVICE_BUS_NAME": queued])
        #expect(late.status == 0, "\(late.stderr)")
        let rerun = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try setup.lookup(["service", "late"]) == "late-pw", "\(rerun.stderr)")
        #expect(try setup.lookup(["service", "api.example.com"]) == "s3cret", "\(rerun.stderr)")
    }

    @Test(
        "items stored into gnome-keyring while the switch runs are all in the vault when it exits 0; when it cannot prove one moved, it exits non-zero naming what stayed"
    )
    func storesDuringTheSwitchAreNotLost() throws {
        let setup = try KeyringSession()
        #expect(try setup.store("before", ["service", "before"], "before-pw") == 0)
        let home = setup.session.directory.path
        // A program storing item after item, through the switch: each one it was told was stored is listed.
        let loop = "for i in $(seq 1 40); do printf v$i | /usr/bin/secret-tool store --label=loop$i loop $i && echo $i >> \(home)/stored; done"
        let (setpriv, wrapped) = OrdinaryUser.wrap("/bin/sh", ["-c", loop])
        let storing = try Subprocess.start(setpriv, wrapped, environment: setup.session.environment)
        usleep(300_000)
        let switched = try setup.keychain(["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"])
        Subprocess.wait(for: storing)
        let stored = ((try? String(contentsOfFile: home + "/stored", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(!stored.isEmpty)
        // Where each item the program stored is now: the vault (as keychain list shows it), or
        // the provider that answers the next call; missing from both, only if the command named it.
        let listed = try setup.keychain(["list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let inVault = Set(stored.filter { listed.output.contains("\tloop=\($0)\n") || listed.output.contains("\tloop=\($0)\t") })
        var missing: [String] = []
        for index in stored where !inVault.contains(index) {
            if try setup.lookup(["loop", index]) != "v\(index)" { missing.append(index) }
        }
        if switched.status == 0 {
            #expect(
                inVault.count == stored.count, "exit 0, but item(s) \(Set(stored).subtracting(inVault).sorted()) stored during the switch are not in the vault: \(switched.stderr)")
            #expect(setup.session.servedVaultPath() == setup.session.vaultPath)
            for index in stored { #expect(try setup.lookup(["loop", index]) == "v\(index)") }
            #expect(try setup.lookup(["service", "before"]) == "before-pw")
        } else {
            let named =
                switched.stderr.range(of: #"(\d+) item\(s\) were stored into"#, options: .regularExpression).flatMap { Int(switched.stderr[$0].prefix { $0.isNumber }) } ?? 0
            #expect(missing.count <= named, "item(s) \(missing) are neither in the vault nor served, and the command named \(named): \(switched.stderr)")
            #expect(switched.stderr.contains("run this again") || switched.stderr.contains("run this command again"), "\(switched.stderr)")
        }
    }

    @Test(
        "back with --switch: the activation file goes, keychain serve of this vault stops, gnome-keyring waiting in the queue gets the name, and the items move into it"
    )
    func switchBackHandsTheNameToTheOldProvider() throws {
        let session = try OrdinaryUserSession()
        #expect(try session.keychain(["serve", "--install"]).status == 0)
        // The first call starts keychain serve by activation.
        #expect(try session.run("/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com"], input: "s3cret").status == 0)
        let serving = try #require(session.ownerProcessID())
        #expect(session.servedVaultPath() == session.vaultPath)
        let started = try session.run("/usr/bin/gnome-keyring-daemon", ["--unlock", "--components=secrets", "--daemonize"], input: "test-password")
        #expect(started.status == 0, "\(started.stderr)")
        defer {
            if let owner = session.ownerProcessID() { kill(owner, SIGTERM) }
            // Only while that process id is still keychain serve's: the switch normally stopped it.
            if (try? String(contentsOfFile: "/proc/\(serving)/cmdline", encoding: .utf8))?.contains("keychain") == true { kill(serving, SIGTERM) }
        }

        let back = try session.keychain(["migrate", "--foreign", "--from", "vault", "--to", "secret-service", "--switch"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stderr.contains("stopped keychain serve of this vault"), "\(back.stderr)")
        #expect(!FileManager.default.fileExists(atPath: session.directory.path + "/data/dbus-1/services/org.freedesktop.secrets.service"))
        let keyring = session.ownerProcessID()
        #expect(keyring != nil && keyring != serving)
        #expect(session.servedVaultPath() == nil)
        #expect(try session.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com"]).output == "s3cret")
        #expect(Self.hasEnded(serving))
    }

    @Test(
        "migrate --foreign --switch from KWallet and from KeePassXC, which do not let their name go either: they are emptied and stopped, and the next call reaches keychain serve",
        arguments: PrivateProvider.Kind.allCases)
    func switchFromTheOtherProvidersTakes(_ kind: PrivateProvider.Kind) throws {
        try #require(kind.unavailableReason == nil, "\(kind.unavailableReason ?? "")")
        let provider = try PrivateProvider(kind, [kind == .kwallet ? "kdewallet" : "Passwords"])
        let home = try ServedVault(serving: false)
        let environment = home.environment.merging(["DBUS_SESSION_BUS_ADDRESS": provider.busAddress]) { $1 }
        // kwalletd fails a libsecret session now and then (docs/secret-service-provider.md): a store is tried again.
        var stored: CommandResult?
        for _ in 0..<4 where stored?.status != 0 {
            stored = try Subprocess.run(
                "/usr/bin/secret-tool", ["store", "--label=Deploy token", "service", "api.example.com"], environment: environment, input: Data("s3cret".utf8))
        }
        #expect(stored?.status == 0, "\(stored?.stderr ?? "")")
        let old = try ProviderSwitchTests.owner(environment)

        let switched = try Subprocess.run(
            KeychainExecutable.path, ["migrate", "--foreign", "--from", "secret-service", "--to", "vault", "--switch"] + (kind == .kwallet ? ["--unlock"] : []),
            environment: environment)
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(switched.stderr.contains("switched: keychain serve of this vault"), "\(switched.stderr)")
        let serving = try ProviderSwitchTests.owner(environment)
        defer { if let serving { kill(serving, SIGTERM) } }
        #expect(serving != nil && serving != old)
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["lookup", "service", "api.example.com"], environment: environment).output == "s3cret")
        if let old { #expect(Self.hasEnded(old)) }
    }

    @Test(
        "a provider's stores reach the switch's watch before the end of its connection: once it has stopped, every item it took after its last listing is known"
    )
    func watchSeesLastStoresBeforeTheEnd() throws {
        let keyring = try PrivateSecretService()
        let environment = ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": keyring.busAddress]
        let asked = try Subprocess.run(
            "/usr/bin/dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetNameOwner", "string:org.freedesktop.secrets"],
            environment: environment)
        let unique = try #require(asked.output.split(separator: "\"").dropFirst().first.map(String.init))
        let watch = try ProviderActivityWatch(of: unique, address: keyring.busAddress)
        for index in 1...3 {
            let stored = try Subprocess.run(
                "/usr/bin/secret-tool", ["store", "--label=late\(index)", "late", "\(index)"], environment: environment, input: Data("v\(index)".utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        // Changing an item (a store over the same attributes) is seen too.
        #expect(try Subprocess.run("/usr/bin/secret-tool", ["store", "--label=late1", "late", "1"], environment: environment, input: Data("again".utf8)).status == 0)
        kill(keyring.keyringPID, SIGTERM)
        // Stopped here, it is not the fixture's to stop again (its process id may be another's by then).
        try "".write(toFile: keyring.directory + "/keyring.pid", atomically: true, encoding: .utf8)
        #expect(watch.waitForEnd(within: .seconds(15)))
        let seen = watch.takeStored()
        #expect(seen.count == 3, "\(seen)")
        #expect(seen.allSatisfy { $0.hasPrefix("/org/freedesktop/secrets/collection/login/") }, "\(seen)")
        #expect(watch.takeStored().isEmpty)
    }
}
