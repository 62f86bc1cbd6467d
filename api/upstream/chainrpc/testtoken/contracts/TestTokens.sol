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
