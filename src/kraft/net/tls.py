"""TLS contexts for the listeners and for the node's own outbound connections, from Kafka's
``ssl.*`` properties with PEM files (Kafka's ``SslFactory`` with ``ssl.keystore.type=PEM``).

What it owns: turning ``TlsSettings`` into an ``ssl.SSLContext`` (Python's ``ssl`` module only; no
crypto of our own), checking at start-up that the files exist and the key matches its certificate,
and naming the principal of a TLS peer from its certificate subject. What it must not do: read
properties (``kraft.server.listener_security`` does, with the per-listener overrides) or accept a
protocol older than TLS 1.2.

Every error is a ``ConfigError`` whose message starts with the property to fix.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kraft.common.errors import ConfigError
from kraft.common.principal import ANONYMOUS, USER_TYPE, KafkaPrincipal

# Kafka's ssl.enabled.protocols values we accept; older ones are refused at start-up.
PROTOCOLS: Mapping[str, ssl.TLSVersion] = {
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
REFUSED_PROTOCOLS = ("SSLv3", "TLSv1", "TLSv1.1", "TLS")
DEFAULT_ENABLED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsSettings:
    """One side's TLS settings, values as Kafka's properties hold them.

    ``prefix`` is how the properties were named (``""`` or ``listener.name.ssl.``), so that an error
    names the property the operator wrote.
    """

    prefix: str = ""
    keystore_type: str = "PEM"
    keystore_location: str | None = None
    keystore_certificate_chain: str | None = field(default=None, repr=False)
    keystore_key: str | None = field(default=None, repr=False)
    key_password: str | None = field(default=None, repr=False)
    truststore_type: str = "PEM"
    truststore_location: str | None = None
    truststore_certificates: str | None = field(default=None, repr=False)
    client_auth: str = "none"
    enabled_protocols: Sequence[str] = DEFAULT_ENABLED_PROTOCOLS
    cipher_suites: Sequence[str] = ()
    endpoint_identification_algorithm: str = "https"

    def prop(self, name: str) -> str:
        return f"{self.prefix}{name}"


def _check_types(s: TlsSettings) -> None:
    for name, value in (("ssl.keystore.type", s.keystore_type), ("ssl.truststore.type", s.truststore_type)):
        if value.upper() != "PEM":
            raise ConfigError(
                f"{s.prop(name)}: only PEM is supported, not {value} (convert the store to PEM)"
            )


def _protocol_range(s: TlsSettings) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    prop = s.prop("ssl.enabled.protocols")
    if not s.enabled_protocols:
        raise ConfigError(f"{prop}: no protocol enabled (use TLSv1.2,TLSv1.3)")
    versions = []
    for name in s.enabled_protocols:
        if name in REFUSED_PROTOCOLS:
            raise ConfigError(f"{prop}: {name} is refused; TLS 1.2 is the minimum (use TLSv1.2,TLSv1.3)")
        if name not in PROTOCOLS:
            raise ConfigError(f"{prop}: unknown protocol {name!r} (use TLSv1.2 and/or TLSv1.3)")
        versions.append(PROTOCOLS[name])
    return min(versions), max(versions)


def _readable(prop: str, location: str) -> str:
    path = Path(os.path.expanduser(location))
    if not path.is_file():
        raise ConfigError(f"{prop}: {path} does not exist or is not a file")
    if not os.access(path, os.R_OK):
        raise ConfigError(f"{prop}: {path} is not readable")
    return str(path)


@contextlib.contextmanager
def _pem_files(s: TlsSettings) -> Iterator[tuple[str, str | None] | None]:
    """(certificate chain file, key file or None) of the keystore, None when there is none. Inline
    PEM (``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``) goes through a private temporary
    directory, since ``ssl`` loads keys from files only; it is removed at once."""
    inline = s.keystore_certificate_chain is not None or s.keystore_key is not None
    if s.keystore_location and inline:
        raise ConfigError(
            f"{s.prop('ssl.keystore.location')}: give either a keystore file or "
            "ssl.keystore.certificate.chain with ssl.keystore.key, not both"
        )
    if s.keystore_location:
        yield _readable(s.prop("ssl.keystore.location"), s.keystore_location), None
        return
    if not inline:
        yield None
        return
    if not s.keystore_certificate_chain or not s.keystore_key:
        missing = "ssl.keystore.key" if not s.keystore_key else "ssl.keystore.certificate.chain"
        raise ConfigError(f"{s.prop(missing)}: required with the other inline PEM keystore property")
    with tempfile.TemporaryDirectory(prefix="kraft-tls-") as tmp:
        chain, key = Path(tmp, "chain.pem"), Path(tmp, "key.pem")
        for path, text in ((chain, s.keystore_certificate_chain), (key, s.keystore_key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        yield str(chain), str(key)


def _load_keystore(ctx: ssl.SSLContext, s: TlsSettings, *, required: bool) -> None:
    with _pem_files(s) as files:
        if files is None:
            if required:
                raise ConfigError(
                    f"{s.prop('ssl.keystore.location')}: a TLS listener needs a key and certificate "
                    "(a PEM file with both, or ssl.keystore.certificate.chain and ssl.keystore.key)"
                )
            return
        certfile, keyfile = files
        prop = s.prop("ssl.keystore.location" if keyfile is None else "ssl.keystore.key")
        # Never None: OpenSSL would prompt for a pass phrase on the terminal.
        password = s.key_password if s.key_password is not None else _no_password
        try:
            ctx.load_cert_chain(certfile, keyfile, password=password)
        except ssl.SSLError as e:
            reason = str(e.reason or e).upper()
            if "KEY_VALUES_MISMATCH" in reason:
                raise ConfigError(f"{prop}: the private key does not match the certificate") from None
            if _encrypted(keyfile or certfile):
                if s.key_password is None:
                    raise ConfigError(
                        f"{s.prop('ssl.key.password')}: the private key is encrypted; give its password"
                    ) from None
                raise ConfigError(
                    f"{s.prop('ssl.key.password')}: cannot decrypt the private key (wrong password?)"
                ) from None
            raise ConfigError(
                f"{prop}: cannot load a PEM private key and certificate chain from it: {e}"
            ) from None
        except OSError as e:
            raise ConfigError(f"{prop}: cannot read the key and certificate chain: {e}") from None


def _no_password() -> str:
    return ""


def _encrypted(path: str) -> bool:
    try:
        return "ENCRYPTED" in Path(path).read_text(errors="replace")
    except OSError:
        return False


def _load_truststore(ctx: ssl.SSLContext, s: TlsSettings) -> bool:
    """Load the trusted certificates; False when none are configured."""
    try:
        if s.truststore_location:
            ctx.load_verify_locations(
                cafile=_readable(s.prop("ssl.truststore.location"), s.truststore_location)
            )
            return True
        if s.truststore_certificates:
            ctx.load_verify_locations(cadata=s.truststore_certificates)
            return True
    except ssl.SSLError as e:
        name = "ssl.truststore.location" if s.truststore_location else "ssl.truststore.certificates"
        raise ConfigError(f"{s.prop(name)}: no usable PEM certificate: {e.reason or e}") from None
    return False


def _common(ctx: ssl.SSLContext, s: TlsSettings) -> None:
    _check_types(s)
    ctx.minimum_version, ctx.maximum_version = _protocol_range(s)
    if s.cipher_suites:
        try:
            ctx.set_ciphers(":".join(s.cipher_suites))
        except ssl.SSLError:
            raise ConfigError(f"{s.prop('ssl.cipher.suites')}: no usable cipher suite") from None


def server_context(s: TlsSettings) -> ssl.SSLContext:
    """The context of a TLS listener: our key and chain, and the client-certificate policy."""
    if s.client_auth not in CLIENT_AUTH:
        raise ConfigError(
            f"{s.prop('ssl.client.auth')}: {s.client_auth!r} is not none, requested or required"
        )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _common(ctx, s)
    _load_keystore(ctx, s, required=True)
    trusted = _load_truststore(ctx, s)
    if s.client_auth != "none" and not trusted:
        raise ConfigError(
            f"{s.prop('ssl.truststore.location')}: ssl.client.auth={s.client_auth} needs a truststore "
            "holding the CA that signs the client certificates"
        )
    ctx.verify_mode = CLIENT_AUTH[s.client_auth]
    return ctx


class KeystoreReloader:
    """Applies a renewed key and certificate to a live listener, without a restart.

    ``check()`` (called on a timer by the node: ``ssl.keystore.reload.interval.ms``) looks at the
    keystore and truststore files (modification time and size). When they changed, it first builds
    a complete new server context from them (every check of start-up: a key that does not match its
    certificate, a half-written file or a wrong password is refused and the listener keeps serving
    the old certificate), then loads the key and chain into the listener's own context, which the
    next handshakes use; open connections keep their session. CAs added to the truststore are
    trusted from then on; a CA removed from it stays trusted until a restart (OpenSSL adds to a
    context's store, it never removes). Inline PEM properties cannot change, so they are not
    watched.
    """

    def __init__(self, settings: TlsSettings, context: ssl.SSLContext) -> None:
        self.settings = settings
        self.context = context
        self._stamp = self._read_stamp()

    @property
    def watched(self) -> list[str]:
        return [p for p in (self.settings.keystore_location, self.settings.truststore_location) if p]

    def _read_stamp(self) -> tuple[tuple[str, int, int], ...]:
        stamp = []
        for path in self.watched:
            try:
                st = os.stat(path)
            except OSError:
                stamp.append((path, -1, -1))
            else:
                stamp.append((path, st.st_mtime_ns, st.st_size))
        return tuple(stamp)

    def check(self) -> bool:
        """Reload if the files changed since the last check; True when a reload was applied.

        Raises:
            ConfigError: the files changed but do not make a valid keystore (nothing applied; the
                same files are not tried again until they change once more).
        """
        stamp = self._read_stamp()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        server_context(self.settings)  # every start-up check, on a scratch context
        _load_keystore(self.context, self.settings, required=True)
        _load_truststore(self.context, self.settings)
        return True


def client_context(s: TlsSettings) -> ssl.SSLContext:
    """The context of the node's own connections to a TLS listener: the truststore (the system's
    CAs when none is given), our key and chain if we have one (for ``ssl.client.auth``), and
    hostname checks unless ``ssl.endpoint.identification.algorithm`` is empty (as Kafka)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _common(ctx, s)
    _load_keystore(ctx, s, required=False)
    if not _load_truststore(ctx, s):
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    ctx.check_hostname = s.endpoint_identification_algorithm.lower() == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


# RFC 2253 attribute keywords, as Java's X500Principal.getName() writes them.
_RFC2253_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


def _escape_rfc2253(value: str) -> str:
    out = []
    for i, c in enumerate(value):
        if c in ',+"\\<>;' or (c == "#" and i == 0) or (c == " " and i in (0, len(value) - 1)):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def subject_dn(subject: Sequence[Sequence[tuple[str, str]]]) -> str:
    """An X.509 subject (as ``SSLSocket.getpeercert()['subject']`` gives it) in RFC 2253 form, most
    specific RDN first: ``CN=client,OU=eng,O=kraft,C=GB`` (Kafka's default principal builder)."""
    rdns = []
    for rdn in reversed(list(subject)):
        rdns.append("+".join(f"{_RFC2253_KEYWORDS.get(k, k)}={_escape_rfc2253(str(v))}" for k, v in rdn))
    return ",".join(rdns)


def peer_principal(peercert: Mapping[str, Any] | None) -> KafkaPrincipal:
    """``User:<subject DN>`` of a verified client certificate; ANONYMOUS without one (Kafka's
    ``DefaultKafkaPrincipalBuilder`` with ``ssl.principal.mapping.rules=DEFAULT``)."""
    if not peercert or not peercert.get("subject"):
        return ANONYMOUS
    return KafkaPrincipal(USER_TYPE, subject_dn(peercert["subject"]))
