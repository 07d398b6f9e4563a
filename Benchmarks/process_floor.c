/*
 * The process floor for `keychain get`: what any program must do to read one sealed value from
 * a vault file. Open the SQLite file read-only, one point select, one AES-256-GCM open with
 * OpenSSL, print the value, exit. keychain-bench compiles it and runs it as a fresh process,
 * as it runs `keychain get`.
 *
 * Usage: process_floor VAULT [--as-keychain]
 *   --as-keychain: OpenSSL initialised as `keychain` initialises it for a short-lived
 *   command (OpenSSLConfiguration.setUpForShortLivedProgram): without reading openssl.cnf, its
 *   error texts, its clean-up at exit or its legacy name tables; without it, OpenSSL as every
 *   program gets it by default.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (argc > 2 && strcmp(argv[2], "--as-keychain") == 0)
        OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS
                                | OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
                            NULL);

    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return 3;
    sqlite3_stmt *select;
    /* A point select on the vault's own table, by primary key, as a read makes. */
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE name = ?", -1, &select, NULL) != SQLITE_OK) return 3;
    sqlite3_bind_text(select, 1, "header", -1, SQLITE_STATIC);
    int found = sqlite3_step(select) == SQLITE_ROW;
    int rowBytes = found ? sqlite3_column_bytes(select, 0) : 0;

    /* One AES-256-GCM open of a 32-byte value (sealed here first, as the floor has no key). */
    unsigned char key[32] = {7}, nonce[12] = {9}, plain[32] = "s3cret", sealed[32], tag[16], out[32];
    int length = 0;
    EVP_CIPHER_CTX *seal = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(seal, EVP_aes_256_gcm(), NULL, key, nonce);
    EVP_EncryptUpdate(seal, sealed, &length, plain, sizeof plain);
    EVP_EncryptFinal_ex(seal, sealed + length, &length);
    EVP_CIPHER_CTX_ctrl(seal, EVP_CTRL_GCM_GET_TAG, 16, tag);
    EVP_CIPHER_CTX_free(seal);
    EVP_CIPHER_CTX *open = EVP_CIPHER_CTX_new();
    EVP_DecryptInit_ex(open, EVP_aes_256_gcm(), NULL, key, nonce);
    EVP_DecryptUpdate(open, out, &length, sealed, sizeof sealed);
    EVP_CIPHER_CTX_ctrl(open, EVP_CTRL_GCM_SET_TAG, 16, tag);
    int opened = EVP_DecryptFinal_ex(open, out + length, &length) == 1;
    EVP_CIPHER_CTX_free(open);

    sqlite3_finalize(select);
    sqlite3_close(db);
    if (!opened || rowBytes == 0) return 4;
    fwrite(out, 1, strlen((char *)out), stdout);
    fputc('\n', stdout);
    return 0;
}
