"""A throwaway certificate authority for a local cluster (``kraft cluster up --secure``).

What it owns: making a CA (an EC P-256 key and a self-signed certificate) and the certificates it
signs for the nodes, each naming the hosts clients reach it by in its subjectAltName (``localhost``
and ``127.0.0.1``), so that host-name verification passes for every client. All of it through the
``cryptography`` package: nothing here does crypto of its own. What it must not do: write files
(``kraft.cli.cluster_security`` does, private ones with mode 0600), or serve anything but a local
cluster: the keys are not protected by a password and nobody revokes anything.

Everything is PEM text (``Pem``), what ``ssl.keystore.location``/``ssl.truststore.location`` with
``ssl.*.type=PEM`` read.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Long enough for a development cluster that is restarted for years; it is thrown away with DIR.
VALIDITY = datetime.timedelta(days=3650)
# Clocks of the clients may lag a little behind the one that signed.
BACKDATE = datetime.timedelta(hours=1)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1")


@dataclass(frozen=True, slots=True)
class Pem:
    """A private key and its certificate, both PEM (the key unencrypted)."""

    key: bytes = field(repr=False)
    certificate: bytes

    @property
    def keystore(self) -> bytes:
        """Key and certificate in one file: what ``ssl.keystore.location`` names."""
        return self.key + self.certificate


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256: every TLS client here (Python's ssl, librdkafka, Java) speaks ECDSA, and it is fast.
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kraft local cluster"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=not ca,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def new_ca(common_name: str, now: datetime.datetime | None = None) -> Pem:
    """A CA that signs the nodes' certificates and nothing else (path length 0)."""
    now = now or _now()
    key = _new_key()
    subject = _name(common_name)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Pem(_key_pem(key), certificate.public_bytes(serialization.Encoding.PEM))


def _san(hosts: Sequence[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):  # in order, once each
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def issue(
    ca: Pem, common_name: str, hosts: Sequence[str] = LOOPBACK_HOSTS, now: datetime.datetime | None = None
) -> Pem:
    """A certificate signed by ``ca`` for a node reached as any of ``hosts`` (host names or IP
    addresses, in its subjectAltName), usable by a TLS server and a TLS client."""
    now = now or _now()
    ca_key = serialization.load_pem_private_key(ca.key, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key is not an EC key made by kraft.cli.local_ca")
    ca_certificate = x509.load_pem_x509_certificate(ca.certificate)
    key = _new_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Pem(_key_pem(key), certificate.public_bytes(serialization.Encoding.PEM))
