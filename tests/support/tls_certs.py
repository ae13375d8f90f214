"""Throwaway PEM certificates for the security tests, made with the ``cryptography`` package.

``make_pki(directory)`` writes, once per test session (EC P-256 keys: fast to make and to use):

* ``ca.pem``: the trusted CA; ``server.pem``: key + chain for ``localhost``/``127.0.0.1`` signed by it
  (what a listener's ``ssl.keystore.location`` names); ``client.pem`` / ``client.key`` /
  ``client.crt``: a client certificate (subject ``CN=client,OU=eng,O=kraft``) signed by the CA;
* ``rogue-ca.pem`` and ``rogue-client.{key,crt}``: another CA and a client it signs (untrusted);
* ``rogue-server.pem``: a server key + chain signed by the rogue CA (a client must refuse it);
* ``mismatch.pem``: a certificate with somebody else's key (a listener must refuse to start);
* ``server-encrypted.pem``: the server key encrypted with the password ``keypass``;
* ``server-renewed.pem``: another key and certificate for the same names from the same CA (a renewal);
* ``expired-server.pem`` and ``expired-client.{key,crt}``: signed by the trusted CA, expired ten days ago.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_DN = "CN=client,OU=eng,O=kraft"
KEY_PASSWORD = "keypass"


@dataclass(frozen=True)
class Pki:
    directory: Path

    def path(self, name: str) -> str:
        return str(self.directory / name)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(**parts: str) -> x509.Name:
    oids = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME}
    # Most general first, as certificates list them; RFC 2253 prints them in reverse.
    return x509.Name([x509.NameAttribute(oids[k], v) for k, v in reversed(list(parts.items()))])


def _cert(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    server: bool = False,
    expired: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    # An expired certificate: valid for a day, ten days ago.
    start = now - datetime.timedelta(days=11 if expired else 1)
    end = now - datetime.timedelta(days=10) if expired else now + datetime.timedelta(days=30)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        ).add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    for prefix in ("", "rogue-"):
        ca_key = _key()
        ca_name = _name(CN=f"kraft {prefix}test CA", O="kraft")
        ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
        server_key = _key()
        server = _cert(_name(CN="localhost", O="kraft"), server_key, ca_name, ca_key, server=True)
        client_key = _key()
        client = _cert(_name(CN="client", OU="eng", O="kraft"), client_key, ca_name, ca_key)
        files[f"{prefix}ca.pem"] = _pem_cert(ca)
        files[f"{prefix}server.pem"] = _pem_key(server_key) + _pem_cert(server) + _pem_cert(ca)
        files[f"{prefix}client.key"] = _pem_key(client_key)
        files[f"{prefix}client.crt"] = _pem_cert(client)
        files[f"{prefix}client.pem"] = _pem_key(client_key) + _pem_cert(client)
        if not prefix:
            files["mismatch.pem"] = _pem_key(_key()) + _pem_cert(server)
            files["server-encrypted.pem"] = _pem_key(server_key, KEY_PASSWORD) + _pem_cert(server)
            files["server.key"] = _pem_key(server_key)
            files["server.crt"] = _pem_cert(server) + _pem_cert(ca)
            renewed_key = _key()
            renewed = _cert(_name(CN="localhost", O="kraft"), renewed_key, ca_name, ca_key, server=True)
            files["server-renewed.pem"] = _pem_key(renewed_key) + _pem_cert(renewed) + _pem_cert(ca)
            old_server = _cert(
                _name(CN="localhost", O="kraft"), server_key, ca_name, ca_key, server=True, expired=True
            )
            files["expired-server.pem"] = _pem_key(server_key) + _pem_cert(old_server) + _pem_cert(ca)
            old_client = _cert(
                _name(CN="client", OU="eng", O="kraft"), client_key, ca_name, ca_key, expired=True
            )
            files["expired-client.key"] = _pem_key(client_key)
            files["expired-client.crt"] = _pem_cert(old_client)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return Pki(directory)


_CACHED: Pki | None = None


def session_pki() -> Pki:
    """The PKI of this test process, made on first use (about a second) and reused after."""
    global _CACHED
    if _CACHED is None:
        import atexit
        import shutil
        import tempfile

        directory = Path(tempfile.mkdtemp(prefix="kraft-test-pki-"))
        atexit.register(shutil.rmtree, directory, True)
        _CACHED = make_pki(directory)
    return _CACHED
