// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice The ERC-20 bookkeeping both test tokens share: balances, transfers and allowances,
/// with the standard Transfer and Approval events the chain routes decode.
abstract contract ERC20Core {
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function _mint(address to, uint256 value) internal {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "ERC20: allowance exceeded");
        if (allowed != type(uint256).max) {
            allowance[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(balanceOf[from] >= value, "ERC20: balance exceeded");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}

/// @title TestToken
/// @notice A standard ERC-20 whose name, symbol and decimals are chosen at deployment; the whole
/// supply goes to the deployer. Tests deploy it with 6 and 18 decimals.
contract TestToken is ERC20Core {
    string public name;
    string public symbol;
    uint8 public immutable decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        _mint(msg.sender, supply);
    }
}

/// @title Bytes32Token
/// @notice A non-standard ERC-20 shaped like MKR and other early tokens: name and symbol are
/// bytes32 rather than string, and decimals is a uint256.
contract Bytes32Token is ERC20Core {
    bytes32 public name;
    bytes32 public symbol;
    uint256 public decimals;

    constructor(bytes32 name_, bytes32 symbol_, uint256 decimals_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        _mint(msg.sender, supply);
    }
}

/// @title SlotProxy
/// @notice A delegating proxy that keeps its target in the storage slot chosen at deployment,
/// as the proxy standards do: EIP-1967 implementation or beacon slot, EIP-1822 (PROXIABLE), or
/// ZeppelinOS's legacy slot (Circle's FiatTokenProxy). With the beacon slot the target is a
/// beacon and calls go to its implementation(). Tests deploy one per standard to check that
/// proxy detection reads the chain.
contract SlotProxy {
    bytes32 private constant BEACON_SLOT = 0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50;
    bytes32 private immutable slot;

    constructor(bytes32 slot_, address target) {
        slot = slot_;
        assembly {
            sstore(slot_, target)
        }
    }

    fallback() external payable {
        bytes32 s = slot;
        address target;
        assembly {
            target := sload(s)
        }
        if (s == BEACON_SLOT) {
            target = Beacon(target).implementation();
        }
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), target, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}

/// @title Beacon
/// @notice An upgrade beacon: beacon proxies ask it for their implementation.
contract Beacon {
    address public implementation;

    constructor(address implementation_) {
        implementation = implementation_;
    }
}
