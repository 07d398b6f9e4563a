import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// libsecret (and the GLib calls it needs), loaded with `dlopen` at run time, so the package
/// builds and runs where libsecret is absent (most servers and containers) and the Secret
/// Service store then reports itself unavailable with the reason.
///
/// Only non-variadic entry points are used. GLib structs are read by offset, as documented by
/// their public layouts: `GError { GQuark domain; gint code; gchar *message; }` (a GQuark is a guint32) and
/// `GList { gpointer data; GList *next; GList *prev; }`.
struct LibSecret: @unchecked Sendable {
    typealias Pointer = UnsafeMutableRawPointer
    typealias ErrorOut = UnsafeMutablePointer<Pointer?>

    // GLib
    let hashTableNewFull: @convention(c) (Pointer?, Pointer?, Pointer?, Pointer?) -> Pointer?
    let hashTableInsert: @convention(c) (Pointer?, Pointer?, Pointer?) -> Int32
    let hashTableLookup: @convention(c) (Pointer?, UnsafeRawPointer?) -> Pointer?
    let hashTableGetKeys: @convention(c) (Pointer?) -> Pointer?
    let hashTableUnref: @convention(c) (Pointer?) -> Void
    let listFree: @convention(c) (Pointer?) -> Void
    let strdup: @convention(c) (UnsafePointer<CChar>?) -> Pointer?
    let free: @convention(c) (Pointer?) -> Void
    let errorFree: @convention(c) (Pointer?) -> Void
    let objectUnref: @convention(c) (Pointer?) -> Void
    let objectRef: @convention(c) (Pointer?) -> Pointer?
    let quarkToString: @convention(c) (UInt32) -> UnsafePointer<CChar>?
    let proxySetDefaultTimeout: @convention(c) (Pointer?, Int32) -> Void
    let cancellableNew: @convention(c) () -> Pointer?
    let cancellableCancel: @convention(c) (Pointer?) -> Void
    let strHash: Pointer
    let strEqual: Pointer
    let gFreePointer: Pointer

    // libsecret
    let serviceGetSync: @convention(c) (Int32, Pointer?, ErrorOut?) -> Pointer?
    /// `secret_service_open_sync`: a connection of the caller's own (where
    /// `secret_service_get_sync` shares one), to the name ``LibSecretBusName`` sets.
    let serviceOpenSync: @convention(c) (UInt, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?
    let serviceGetType: @convention(c) () -> UInt
    let serviceDisconnect: @convention(c) () -> Void
    let collectionForAliasSync: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?
    let collectionGetLocked: @convention(c) (Pointer?) -> Int32
    let collectionGetLabel: @convention(c) (Pointer?) -> Pointer?
    let collectionSearchForPathsSync: @convention(c) (Pointer?, Pointer?, Pointer?, Pointer?, ErrorOut?) -> Pointer?
    let itemNewForPathSync: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?
    let strfreev: @convention(c) (Pointer?) -> Void
    let itemGetLocked: @convention(c) (Pointer?) -> Int32
    let itemGetAttributes: @convention(c) (Pointer?) -> Pointer?
    let itemGetLabel: @convention(c) (Pointer?) -> Pointer?
    /// Optional: libsecret 0.18.6 and later.
    let itemGetSchemaName: (@convention(c) (Pointer?) -> Pointer?)?
    let itemGetCreated: @convention(c) (Pointer?) -> UInt64
    let itemGetModified: @convention(c) (Pointer?) -> UInt64
    let itemGetSecret: @convention(c) (Pointer?) -> Pointer?
    let itemLoadSecretSync: @convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32
    let itemCreateSync: @convention(c) (Pointer?, Pointer?, Pointer?, UnsafePointer<CChar>?, Pointer?, Int32, Pointer?, ErrorOut?) -> Pointer?
    let itemSetSecretSync: @convention(c) (Pointer?, Pointer?, Pointer?, ErrorOut?) -> Int32
    let itemSetAttributesSync: @convention(c) (Pointer?, Pointer?, Pointer?, Pointer?, ErrorOut?) -> Int32
    let itemSetLabelSync: @convention(c) (Pointer?, UnsafePointer<CChar>?, Pointer?, ErrorOut?) -> Int32
    let itemDeleteSync: @convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32
    let valueNew: @convention(c) (UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?) -> Pointer?
    let valueGet: @convention(c) (Pointer?, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?
    let valueGetContentType: @convention(c) (Pointer?) -> UnsafePointer<CChar>?
    let valueUnref: @convention(c) (Pointer?) -> Void

    // Every collection and item of the provider, for switching providers (``SecretServiceProviderContents``).
    let serviceLoadCollectionsSync: @convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32
    let serviceGetCollections: @convention(c) (Pointer?) -> Pointer?
    let serviceReadAliasPathSync: @convention(c) (Pointer?, UnsafePointer<CChar>?, Pointer?, ErrorOut?) -> Pointer?
    let collectionLoadItemsSync: @convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32
    let collectionGetItems: @convention(c) (Pointer?) -> Pointer?
    let collectionCreateSync: @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?
    let collectionDeleteSync: @convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32
    let proxyGetObjectPath: @convention(c) (Pointer?) -> UnsafePointer<CChar>?
    // Which process owns the provider's name: org.freedesktop.DBus.GetConnectionUnixProcessID.
    let proxyGetConnection: @convention(c) (Pointer?) -> Pointer?
    let connectionCallSync:
        @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Pointer?, Pointer?, Int32, Int32, Pointer?, ErrorOut?)
            ->
            Pointer?
    let variantNewString: @convention(c) (UnsafePointer<CChar>?) -> Pointer?
    let variantNewTuple: @convention(c) (UnsafePointer<Pointer?>?, Int) -> Pointer?
    let variantGetChildValue: @convention(c) (Pointer?, Int) -> Pointer?
    let variantGetUInt32: @convention(c) (Pointer?) -> UInt32
    let variantUnref: @convention(c) (Pointer?) -> Void
    // Asking the bus about the name without starting a provider (SecretServiceOwner).
    let busGetSync: @convention(c) (Int32, Pointer?, ErrorOut?) -> Pointer?
    let variantGetString: @convention(c) (Pointer?, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?
    let variantGetVariant: @convention(c) (Pointer?) -> Pointer?
    let variantGetBoolean: @convention(c) (Pointer?) -> Int32
    let variantNChildren: @convention(c) (Pointer?) -> Int
    let variantNewObjectPath: @convention(c) (UnsafePointer<CChar>?) -> Pointer?
    let variantNewVariant: @convention(c) (Pointer?) -> Pointer?
    let variantNewObjv: @convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, Int) -> Pointer?
    let variantNewFixedArray: @convention(c) (UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Int) -> Pointer?

    // Flags, as in libsecret's headers.
    static let searchLoadSecrets: Int32 = 1 << 3
    static let serviceOpenSession: Int32 = 1 << 1

    /// The loaded library, or why it could not be loaded. Resolved once per process.
    static let shared: Result<LibSecret, StoreError> = load()

    private static func load() -> Result<LibSecret, StoreError> {
        guard let handle = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(.unavailable("libsecret is not installed (\(reason)); install libsecret-1-0 to use the Secret Service"))
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let pointer = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(pointer, to: type)
        }
        func raw(_ name: String) -> Pointer? {
            guard let pointer = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return pointer
        }
        let library = LibSecret(
            hashTableNewFull: symbol("g_hash_table_new_full", as: (@convention(c) (Pointer?, Pointer?, Pointer?, Pointer?) -> Pointer?).self) ?? { _, _, _, _ in nil },
            hashTableInsert: symbol("g_hash_table_insert", as: (@convention(c) (Pointer?, Pointer?, Pointer?) -> Int32).self) ?? { _, _, _ in 0 },
            hashTableLookup: symbol("g_hash_table_lookup", as: (@convention(c) (Pointer?, UnsafeRawPointer?) -> Pointer?).self) ?? { _, _ in nil },
            hashTableGetKeys: symbol("g_hash_table_get_keys", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            hashTableUnref: symbol("g_hash_table_unref", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            listFree: symbol("g_list_free", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            strdup: symbol("g_strdup", as: (@convention(c) (UnsafePointer<CChar>?) -> Pointer?).self) ?? { _ in nil },
            free: symbol("g_free", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            errorFree: symbol("g_error_free", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            objectUnref: symbol("g_object_unref", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            objectRef: symbol("g_object_ref", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { $0 },
            quarkToString: symbol("g_quark_to_string", as: (@convention(c) (UInt32) -> UnsafePointer<CChar>?).self) ?? { _ in nil },
            proxySetDefaultTimeout: symbol("g_dbus_proxy_set_default_timeout", as: (@convention(c) (Pointer?, Int32) -> Void).self) ?? { _, _ in },
            cancellableNew: symbol("g_cancellable_new", as: (@convention(c) () -> Pointer?).self) ?? { nil },
            cancellableCancel: symbol("g_cancellable_cancel", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            strHash: raw("g_str_hash") ?? Pointer(bitPattern: 1)!,
            strEqual: raw("g_str_equal") ?? Pointer(bitPattern: 1)!,
            gFreePointer: raw("g_free") ?? Pointer(bitPattern: 1)!,
            serviceGetSync: symbol("secret_service_get_sync", as: (@convention(c) (Int32, Pointer?, ErrorOut?) -> Pointer?).self) ?? { _, _, _ in nil },
            serviceOpenSync: symbol("secret_service_open_sync", as: (@convention(c) (UInt, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?).self) ?? {
                _, _, _, _, _ in nil
            },
            serviceGetType: symbol("secret_service_get_type", as: (@convention(c) () -> UInt).self) ?? { 0 },
            serviceDisconnect: symbol("secret_service_disconnect", as: (@convention(c) () -> Void).self) ?? {},
            collectionForAliasSync: symbol("secret_collection_for_alias_sync", as: (@convention(c) (Pointer?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?).self)
                ?? { _, _, _, _, _ in nil },
            collectionGetLocked: symbol("secret_collection_get_locked", as: (@convention(c) (Pointer?) -> Int32).self) ?? { _ in 1 },
            collectionGetLabel: symbol("secret_collection_get_label", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            collectionSearchForPathsSync: symbol(
                "secret_collection_search_for_dbus_paths_sync", as: (@convention(c) (Pointer?, Pointer?, Pointer?, Pointer?, ErrorOut?) -> Pointer?).self) ?? {
                    _, _, _, _, _ in nil
                },
            itemNewForPathSync: symbol("secret_item_new_for_dbus_path_sync", as: (@convention(c) (Pointer?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?).self)
                ?? { _, _, _, _, _ in nil },
            strfreev: symbol("g_strfreev", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            itemGetLocked: symbol("secret_item_get_locked", as: (@convention(c) (Pointer?) -> Int32).self) ?? { _ in 1 },
            itemGetAttributes: symbol("secret_item_get_attributes", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            itemGetLabel: symbol("secret_item_get_label", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            itemGetSchemaName: dlsym(handle, "secret_item_get_schema_name").map { unsafeBitCast($0, to: (@convention(c) (Pointer?) -> Pointer?).self) },
            itemGetCreated: symbol("secret_item_get_created", as: (@convention(c) (Pointer?) -> UInt64).self) ?? { _ in 0 },
            itemGetModified: symbol("secret_item_get_modified", as: (@convention(c) (Pointer?) -> UInt64).self) ?? { _ in 0 },
            itemGetSecret: symbol("secret_item_get_secret", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            itemLoadSecretSync: symbol("secret_item_load_secret_sync", as: (@convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _ in 0 },
            itemCreateSync: symbol(
                "secret_item_create_sync", as: (@convention(c) (Pointer?, Pointer?, Pointer?, UnsafePointer<CChar>?, Pointer?, Int32, Pointer?, ErrorOut?) -> Pointer?).self) ?? {
                    _, _, _, _, _, _, _, _ in nil
                },
            itemSetSecretSync: symbol("secret_item_set_secret_sync", as: (@convention(c) (Pointer?, Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _, _ in 0 },
            itemSetAttributesSync: symbol("secret_item_set_attributes_sync", as: (@convention(c) (Pointer?, Pointer?, Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? {
                _, _, _, _, _ in 0
            },
            itemSetLabelSync: symbol("secret_item_set_label_sync", as: (@convention(c) (Pointer?, UnsafePointer<CChar>?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _, _ in 0
            },
            itemDeleteSync: symbol("secret_item_delete_sync", as: (@convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _ in 0 },
            valueNew: symbol("secret_value_new", as: (@convention(c) (UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?) -> Pointer?).self) ?? { _, _, _ in nil },
            valueGet: symbol("secret_value_get", as: (@convention(c) (Pointer?, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?).self) ?? { _, _ in nil },
            valueGetContentType: symbol("secret_value_get_content_type", as: (@convention(c) (Pointer?) -> UnsafePointer<CChar>?).self) ?? { _ in nil },
            valueUnref: symbol("secret_value_unref", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            serviceLoadCollectionsSync: symbol("secret_service_load_collections_sync", as: (@convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _ in 0 },
            serviceGetCollections: symbol("secret_service_get_collections", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            serviceReadAliasPathSync: symbol(
                "secret_service_read_alias_dbus_path_sync", as: (@convention(c) (Pointer?, UnsafePointer<CChar>?, Pointer?, ErrorOut?) -> Pointer?).self) ?? { _, _, _, _ in nil },
            collectionLoadItemsSync: symbol("secret_collection_load_items_sync", as: (@convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _ in 0 },
            collectionGetItems: symbol("secret_collection_get_items", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            collectionCreateSync: symbol(
                "secret_collection_create_sync",
                as: (@convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Pointer?, ErrorOut?) -> Pointer?).self) ?? { _, _, _, _, _, _ in nil },
            collectionDeleteSync: symbol("secret_collection_delete_sync", as: (@convention(c) (Pointer?, Pointer?, ErrorOut?) -> Int32).self) ?? { _, _, _ in 0 },
            proxyGetObjectPath: symbol("g_dbus_proxy_get_object_path", as: (@convention(c) (Pointer?) -> UnsafePointer<CChar>?).self) ?? { _ in nil },
            proxyGetConnection: symbol("g_dbus_proxy_get_connection", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            connectionCallSync: symbol(
                "g_dbus_connection_call_sync",
                as: (@convention(c) (
                    Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Pointer?, Pointer?, Int32, Int32, Pointer?, ErrorOut?
                ) -> Pointer?).self) ?? { _, _, _, _, _, _, _, _, _, _, _ in nil },
            variantNewString: symbol("g_variant_new_string", as: (@convention(c) (UnsafePointer<CChar>?) -> Pointer?).self) ?? { _ in nil },
            variantNewTuple: symbol("g_variant_new_tuple", as: (@convention(c) (UnsafePointer<Pointer?>?, Int) -> Pointer?).self) ?? { _, _ in nil },
            variantGetChildValue: symbol("g_variant_get_child_value", as: (@convention(c) (Pointer?, Int) -> Pointer?).self) ?? { _, _ in nil },
            variantGetUInt32: symbol("g_variant_get_uint32", as: (@convention(c) (Pointer?) -> UInt32).self) ?? { _ in 0 },
            variantUnref: symbol("g_variant_unref", as: (@convention(c) (Pointer?) -> Void).self) ?? { _ in },
            busGetSync: symbol("g_bus_get_sync", as: (@convention(c) (Int32, Pointer?, ErrorOut?) -> Pointer?).self) ?? { _, _, _ in nil },
            variantGetString: symbol("g_variant_get_string", as: (@convention(c) (Pointer?, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?).self) ?? { _, _ in nil },
            variantGetVariant: symbol("g_variant_get_variant", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            variantGetBoolean: symbol("g_variant_get_boolean", as: (@convention(c) (Pointer?) -> Int32).self) ?? { _ in 0 },
            variantNChildren: symbol("g_variant_n_children", as: (@convention(c) (Pointer?) -> Int).self) ?? { _ in 0 },
            variantNewObjectPath: symbol("g_variant_new_object_path", as: (@convention(c) (UnsafePointer<CChar>?) -> Pointer?).self) ?? { _ in nil },
            variantNewVariant: symbol("g_variant_new_variant", as: (@convention(c) (Pointer?) -> Pointer?).self) ?? { _ in nil },
            variantNewObjv: symbol("g_variant_new_objv", as: (@convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, Int) -> Pointer?).self) ?? { _, _ in nil },
            variantNewFixedArray: symbol("g_variant_new_fixed_array", as: (@convention(c) (UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Int) -> Pointer?).self) ?? {
                _, _, _, _ in nil
            }
        )
        guard missing.isEmpty else {
            return .failure(.unavailable("libsecret lacks \(missing.joined(separator: ", ")); version 0.18 or later is needed"))
        }
        return .success(library)
    }

    // MARK: Helpers over GLib types

    /// A GHashTable<string, string> owning copies of `attributes`; unref it when done.
    func hashTable(_ attributes: [String: String]) -> Pointer? {
        let table = hashTableNewFull(strHash, strEqual, gFreePointer, gFreePointer)
        for (key, value) in attributes {
            _ = hashTableInsert(table, strdup(key), strdup(value))
        }
        return table
    }

    /// The entries of a GHashTable<string, string>.
    func dictionary(_ table: Pointer?) -> [String: String] {
        var result: [String: String] = [:]
        let keys = hashTableGetKeys(table)
        var node = keys
        while let current = node {
            if let key = current.load(as: Pointer?.self) {
                let value = hashTableLookup(table, key)
                result[String(cString: key.assumingMemoryBound(to: CChar.self))] = value.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
            }
            node = current.load(fromByteOffset: MemoryLayout<Pointer>.size, as: Pointer?.self)
        }
        listFree(keys)
        return result
    }

    /// The data pointers of a GList, which is then freed (not its elements).
    func elements(_ list: Pointer?) -> [Pointer] {
        var result: [Pointer] = []
        var node = list
        while let current = node {
            if let data = current.load(as: Pointer?.self) { result.append(data) }
            node = current.load(fromByteOffset: MemoryLayout<Pointer>.size, as: Pointer?.self)
        }
        listFree(list)
        return result
    }

    /// What a GError says: its domain's name, its code and its message.
    struct GError: Sendable {
        let domain: String
        let code: Int32
        let message: String
    }

    /// A GError's domain, code and message, then frees it.
    func consume(_ error: Pointer?) -> GError? {
        guard let error else { return nil }
        defer { errorFree(error) }
        let domain = quarkToString(error.load(as: UInt32.self)).map { String(cString: $0) } ?? ""
        let code = error.load(fromByteOffset: 4, as: Int32.self)
        let message = error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? "unknown error"
        return GError(domain: domain, code: code, message: message)
    }

    /// The strings of a NULL-terminated `gchar**`, which is freed.
    func takeStrings(_ vector: Pointer?) -> [String] {
        guard let vector else { return [] }
        defer { strfreev(vector) }
        var result: [String] = []
        var offset = 0
        while let string = vector.load(fromByteOffset: offset, as: Pointer?.self) {
            result.append(String(cString: string.assumingMemoryBound(to: CChar.self)))
            offset += MemoryLayout<Pointer>.size
        }
        return result
    }

    /// A gchar* the caller owns, as a String, then freed.
    func takeString(_ pointer: Pointer?) -> String? {
        guard let pointer else { return nil }
        defer { free(pointer) }
        return String(cString: pointer.assumingMemoryBound(to: CChar.self))
    }
}
