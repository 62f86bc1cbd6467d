// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title TestENSRegistry
/// @notice The part of the ENS registry a resolving client reads, with ENS's selectors:
/// resolver(bytes32) and owner(bytes32), and the two writes that build a tree of names:
/// setSubnodeOwner and setResolver, each allowed to the node's owner. The deployer owns the root.
contract TestENSRegistry {
    struct Record {
        address owner;
        address resolver;
    }

    mapping(bytes32 => Record) private records;

    constructor() {
        records[bytes32(0)].owner = msg.sender;
    }

    modifier onlyOwner(bytes32 node) {
        require(records[node].owner == msg.sender, "ENS: not the node's owner");
        _;
    }

    function owner(bytes32 node) external view returns (address) {
        return records[node].owner;
    }

    function resolver(bytes32 node) external view returns (address) {
        return records[node].resolver;
    }

    function setSubnodeOwner(bytes32 node, bytes32 label, address owner_) external onlyOwner(node) returns (bytes32) {
        bytes32 sub = keccak256(abi.encodePacked(node, label));
        records[sub].owner = owner_;
        return sub;
    }

    function setResolver(bytes32 node, address resolver_) external onlyOwner(node) {
        records[node].resolver = resolver_;
    }
}

/// @title TestPublicResolver
/// @notice The records of ENS's public resolver a client reads, with its selectors: addr(bytes32),
/// name(bytes32) (reverse records), text(bytes32,string) (the avatar), and ERC-165. Tests are its
/// only writers, so the setters check no authorisation (the real resolver asks the registry).
contract TestPublicResolver {
    mapping(bytes32 => address) private addrs;
    mapping(bytes32 => string) private names;
    mapping(bytes32 => mapping(string => string)) private texts;

    function setAddr(bytes32 node, address a) external {
        addrs[node] = a;
    }

    function setName(bytes32 node, string calldata n) external {
        names[node] = n;
    }

    function setText(bytes32 node, string calldata key, string calldata value) external {
        texts[node][key] = value;
    }

    function addr(bytes32 node) external view returns (address) {
        return addrs[node];
    }

    function name(bytes32 node) external view returns (string memory) {
        return names[node];
    }

    function text(bytes32 node, string calldata key) external view returns (string memory) {
        return texts[node][key];
    }

    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x3b3b57de || id == 0x691f3431 || id == 0x59d1d43c;
    }
}

/// @title TestOffchainResolver
/// @notice An ENSIP-10 wildcard resolver that answers through EIP-3668 (CCIP-read), shaped like
/// ENS's reference offchain resolver: resolve(bytes,bytes) reverts with OffchainLookup naming its
/// gateway, and resolveWithProof(bytes,bytes) takes the gateway's answer, an ABI-encoded
/// (bytes result, uint64 expires, bytes signature). The reference resolver checks the signature
/// against its signers; this one only checks the expiry, since the test's gateway is its own.
contract TestOffchainResolver {
    error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData);

    string private url;

    constructor(string memory url_) {
        url = url_;
    }

    function resolve(bytes calldata name, bytes calldata data) external view returns (bytes memory) {
        string[] memory urls = new string[](1);
        urls[0] = url;
        bytes memory callData = abi.encodeWithSelector(this.resolve.selector, name, data);
        revert OffchainLookup(address(this), urls, callData, this.resolveWithProof.selector, callData);
    }

    function resolveWithProof(bytes calldata response, bytes calldata) external view returns (bytes memory) {
        (bytes memory result, uint64 expires, ) = abi.decode(response, (bytes, uint64, bytes));
        require(expires >= block.timestamp, "OffchainResolver: signature expired");
        return result;
    }

    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x9061b923;
    }
}
