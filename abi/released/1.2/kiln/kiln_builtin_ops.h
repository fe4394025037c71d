/* Builtin operator codes. Values equal the TFLite schema's BuiltinOperator,
 * so a code read from a .tflite file (max of builtin_code and
 * deprecated_builtin_code) compares directly. Append-only: new codes may
 * appear in any minor version of the extension API; a plugin must treat a
 * code it does not know as unsupported, never as an error. */
#ifndef KILN_KILN_BUILTIN_OPS_H_
#define KILN_KILN_BUILTIN_OPS_H_

#include <stdint.h>

/* A custom operator: identified by (KILN_OP_CUSTOM, custom name). */
#define KILN_OP_ADD 0
#define KILN_OP_AVERAGE_POOL_2D 1
#define KILN_OP_CONCATENATION 2
#define KILN_OP_CONV_2D 3
#define KILN_OP_DEPTHWISE_CONV_2D 4
#define KILN_OP_DEPTH_TO_SPACE 5
#define KILN_OP_DEQUANTIZE 6
#define KILN_OP_EMBEDDING_LOOKUP 7
#define KILN_OP_FLOOR 8
#define KILN_OP_FULLY_CONNECTED 9
#define KILN_OP_HASHTABLE_LOOKUP 10
#define KILN_OP_L2_NORMALIZATION 11
#define KILN_OP_L2_POOL_2D 12
#define KILN_OP_LOCAL_RESPONSE_NORMALIZATION 13
#define KILN_OP_LOGISTIC 14
#define KILN_OP_LSH_PROJECTION 15
#define KILN_OP_LSTM 16
#define KILN_OP_MAX_POOL_2D 17
#define KILN_OP_MUL 18
#define KILN_OP_RELU 19
#define KILN_OP_RELU_N1_TO_1 20
#define KILN_OP_RELU6 21
#define KILN_OP_RESHAPE 22
#define KILN_OP_RESIZE_BILINEAR 23
#define KILN_OP_RNN 24
#define KILN_OP_SOFTMAX 25
#define KILN_OP_SPACE_TO_DEPTH 26
#define KILN_OP_SVDF 27
#define KILN_OP_TANH 28
#define KILN_OP_CONCAT_EMBEDDINGS 29
#define KILN_OP_SKIP_GRAM 30
#define KILN_OP_CALL 31
#define KILN_OP_CUSTOM 32
#define KILN_OP_EMBEDDING_LOOKUP_SPARSE 33
#define KILN_OP_PAD 34
#define KILN_OP_UNIDIRECTIONAL_SEQUENCE_RNN 35
#define KILN_OP_GATHER 36
#define KILN_OP_BATCH_TO_SPACE_ND 37
#define KILN_OP_SPACE_TO_BATCH_ND 38
#define KILN_OP_TRANSPOSE 39
#define KILN_OP_MEAN 40
#define KILN_OP_SUB 41
#define KILN_OP_DIV 42
#define KILN_OP_SQUEEZE 43
#define KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM 44
#define KILN_OP_STRIDED_SLICE 45
#define KILN_OP_BIDIRECTIONAL_SEQUENCE_RNN 46
#define KILN_OP_EXP 47
#define KILN_OP_TOPK_V2 48
#define KILN_OP_SPLIT 49
#define KILN_OP_LOG_SOFTMAX 50
#define KILN_OP_DELEGATE 51
#define KILN_OP_BIDIRECTIONAL_SEQUENCE_LSTM 52
#define KILN_OP_CAST 53
#define KILN_OP_PRELU 54
#define KILN_OP_MAXIMUM 55
#define KILN_OP_ARG_MAX 56
#define KILN_OP_MINIMUM 57
#define KILN_OP_LESS 58
#define KILN_OP_NEG 59
#define KILN_OP_PADV2 60
#define KILN_OP_GREATER 61
#define KILN_OP_GREATER_EQUAL 62
#define KILN_OP_LESS_EQUAL 63
#define KILN_OP_SELECT 64
#define KILN_OP_SLICE 65
#define KILN_OP_SIN 66
#define KILN_OP_TRANSPOSE_CONV 67
#define KILN_OP_SPARSE_TO_DENSE 68
#define KILN_OP_TILE 69
#define KILN_OP_EXPAND_DIMS 70
#define KILN_OP_EQUAL 71
#define KILN_OP_NOT_EQUAL 72
#define KILN_OP_LOG 73
#define KILN_OP_SUM 74
#define KILN_OP_SQRT 75
#define KILN_OP_RSQRT 76
#define KILN_OP_SHAPE 77
#define KILN_OP_POW 78
#define KILN_OP_ARG_MIN 79
#define KILN_OP_FAKE_QUANT 80
#define KILN_OP_REDUCE_PROD 81
#define KILN_OP_REDUCE_MAX 82
#define KILN_OP_PACK 83
#define KILN_OP_LOGICAL_OR 84
#define KILN_OP_ONE_HOT 85
#define KILN_OP_LOGICAL_AND 86
#define KILN_OP_LOGICAL_NOT 87
#define KILN_OP_UNPACK 88
#define KILN_OP_REDUCE_MIN 89
#define KILN_OP_FLOOR_DIV 90
#define KILN_OP_REDUCE_ANY 91
#define KILN_OP_SQUARE 92
#define KILN_OP_ZEROS_LIKE 93
#define KILN_OP_FILL 94
#define KILN_OP_FLOOR_MOD 95
#define KILN_OP_RANGE 96
#define KILN_OP_RESIZE_NEAREST_NEIGHBOR 97
#define KILN_OP_LEAKY_RELU 98
#define KILN_OP_SQUARED_DIFFERENCE 99
#define KILN_OP_MIRROR_PAD 100
#define KILN_OP_ABS 101
#define KILN_OP_SPLIT_V 102
#define KILN_OP_UNIQUE 103
#define KILN_OP_CEIL 104
#define KILN_OP_REVERSE_V2 105
#define KILN_OP_ADD_N 106
#define KILN_OP_GATHER_ND 107
#define KILN_OP_COS 108
#define KILN_OP_WHERE 109
#define KILN_OP_RANK 110
#define KILN_OP_ELU 111
#define KILN_OP_REVERSE_SEQUENCE 112
#define KILN_OP_MATRIX_DIAG 113
#define KILN_OP_QUANTIZE 114
#define KILN_OP_MATRIX_SET_DIAG 115
#define KILN_OP_ROUND 116
#define KILN_OP_HARD_SWISH 117
#define KILN_OP_IF 118
#define KILN_OP_WHILE 119
#define KILN_OP_NON_MAX_SUPPRESSION_V4 120
#define KILN_OP_NON_MAX_SUPPRESSION_V5 121
#define KILN_OP_SCATTER_ND 122
#define KILN_OP_SELECT_V2 123
#define KILN_OP_DENSIFY 124
#define KILN_OP_SEGMENT_SUM 125
#define KILN_OP_BATCH_MATMUL 126
#define KILN_OP_PLACEHOLDER_FOR_GREATER_OP_CODES 127
#define KILN_OP_CUMSUM 128
#define KILN_OP_CALL_ONCE 129
#define KILN_OP_BROADCAST_TO 130
#define KILN_OP_RFFT2D 131
#define KILN_OP_CONV_3D 132
#define KILN_OP_IMAG 133
#define KILN_OP_REAL 134
#define KILN_OP_COMPLEX_ABS 135
#define KILN_OP_HASHTABLE 136
#define KILN_OP_HASHTABLE_FIND 137
#define KILN_OP_HASHTABLE_IMPORT 138
#define KILN_OP_HASHTABLE_SIZE 139
#define KILN_OP_REDUCE_ALL 140
#define KILN_OP_CONV_3D_TRANSPOSE 141
#define KILN_OP_VAR_HANDLE 142
#define KILN_OP_READ_VARIABLE 143
#define KILN_OP_ASSIGN_VARIABLE 144
#define KILN_OP_BROADCAST_ARGS 145
#define KILN_OP_RANDOM_STANDARD_NORMAL 146
#define KILN_OP_BUCKETIZE 147
#define KILN_OP_RANDOM_UNIFORM 148
#define KILN_OP_MULTINOMIAL 149
#define KILN_OP_GELU 150
#define KILN_OP_DYNAMIC_UPDATE_SLICE 151
#define KILN_OP_RELU_0_TO_1 152
#define KILN_OP_UNSORTED_SEGMENT_PROD 153
#define KILN_OP_UNSORTED_SEGMENT_MAX 154
#define KILN_OP_UNSORTED_SEGMENT_SUM 155
#define KILN_OP_ATAN2 156
#define KILN_OP_UNSORTED_SEGMENT_MIN 157
#define KILN_OP_SIGN 158
#define KILN_OP_BITCAST 159
#define KILN_OP_BITWISE_XOR 160
#define KILN_OP_RIGHT_SHIFT 161
#define KILN_OP_STABLEHLO_LOGISTIC 162
#define KILN_OP_STABLEHLO_ADD 163
#define KILN_OP_STABLEHLO_DIVIDE 164
#define KILN_OP_STABLEHLO_MULTIPLY 165
#define KILN_OP_STABLEHLO_MAXIMUM 166
#define KILN_OP_STABLEHLO_RESHAPE 167
#define KILN_OP_STABLEHLO_CLAMP 168
#define KILN_OP_STABLEHLO_CONCATENATE 169
#define KILN_OP_STABLEHLO_BROADCAST_IN_DIM 170
#define KILN_OP_STABLEHLO_CONVOLUTION 171
#define KILN_OP_STABLEHLO_SLICE 172
#define KILN_OP_STABLEHLO_CUSTOM_CALL 173
#define KILN_OP_STABLEHLO_REDUCE 174
#define KILN_OP_STABLEHLO_ABS 175
#define KILN_OP_STABLEHLO_AND 176
#define KILN_OP_STABLEHLO_COSINE 177
#define KILN_OP_STABLEHLO_EXPONENTIAL 178
#define KILN_OP_STABLEHLO_FLOOR 179
#define KILN_OP_STABLEHLO_LOG 180
#define KILN_OP_STABLEHLO_MINIMUM 181
#define KILN_OP_STABLEHLO_NEGATE 182
#define KILN_OP_STABLEHLO_OR 183
#define KILN_OP_STABLEHLO_POWER 184
#define KILN_OP_STABLEHLO_REMAINDER 185
#define KILN_OP_STABLEHLO_RSQRT 186
#define KILN_OP_STABLEHLO_SELECT 187
#define KILN_OP_STABLEHLO_SUBTRACT 188
#define KILN_OP_STABLEHLO_TANH 189
#define KILN_OP_STABLEHLO_SCATTER 190
#define KILN_OP_STABLEHLO_COMPARE 191
#define KILN_OP_STABLEHLO_CONVERT 192
#define KILN_OP_STABLEHLO_DYNAMIC_SLICE 193
#define KILN_OP_STABLEHLO_DYNAMIC_UPDATE_SLICE 194
#define KILN_OP_STABLEHLO_PAD 195
#define KILN_OP_STABLEHLO_IOTA 196
#define KILN_OP_STABLEHLO_DOT_GENERAL 197
#define KILN_OP_STABLEHLO_REDUCE_WINDOW 198
#define KILN_OP_STABLEHLO_SORT 199
#define KILN_OP_STABLEHLO_WHILE 200
#define KILN_OP_STABLEHLO_GATHER 201
#define KILN_OP_STABLEHLO_TRANSPOSE 202
#define KILN_OP_DILATE 203
#define KILN_OP_STABLEHLO_RNG_BIT_GENERATOR 204
#define KILN_OP_REDUCE_WINDOW 205
#define KILN_OP_STABLEHLO_COMPOSITE 206
#define KILN_OP_STABLEHLO_SHIFT_LEFT 207
#define KILN_OP_STABLEHLO_CBRT 208
#define KILN_OP_STABLEHLO_CASE 209

/* Name of a builtin op code as in the TFLite schema ("CONV_2D"), or
 * "UNKNOWN" for a code this header does not know. Header-only (no symbol),
 * so plugins and hosts can both use it. Added in extension API 1.1. */
static inline const char* KilnBuiltinOpName(int32_t builtin_code) {
  switch (builtin_code) {
    case KILN_OP_ADD:
      return "ADD";
    case KILN_OP_AVERAGE_POOL_2D:
      return "AVERAGE_POOL_2D";
    case KILN_OP_CONCATENATION:
      return "CONCATENATION";
    case KILN_OP_CONV_2D:
      return "CONV_2D";
    case KILN_OP_DEPTHWISE_CONV_2D:
      return "DEPTHWISE_CONV_2D";
    case KILN_OP_DEPTH_TO_SPACE:
      return "DEPTH_TO_SPACE";
    case KILN_OP_DEQUANTIZE:
      return "DEQUANTIZE";
    case KILN_OP_EMBEDDING_LOOKUP:
      return "EMBEDDING_LOOKUP";
    case KILN_OP_FLOOR:
      return "FLOOR";
    case KILN_OP_FULLY_CONNECTED:
      return "FULLY_CONNECTED";
    case KILN_OP_HASHTABLE_LOOKUP:
      return "HASHTABLE_LOOKUP";
    case KILN_OP_L2_NORMALIZATION:
      return "L2_NORMALIZATION";
    case KILN_OP_L2_POOL_2D:
      return "L2_POOL_2D";
    case KILN_OP_LOCAL_RESPONSE_NORMALIZATION:
      return "LOCAL_RESPONSE_NORMALIZATION";
    case KILN_OP_LOGISTIC:
      return "LOGISTIC";
    case KILN_OP_LSH_PROJECTION:
      return "LSH_PROJECTION";
    case KILN_OP_LSTM:
      return "LSTM";
    case KILN_OP_MAX_POOL_2D:
      return "MAX_POOL_2D";
    case KILN_OP_MUL:
      return "MUL";
    case KILN_OP_RELU:
      return "RELU";
    case KILN_OP_RELU_N1_TO_1:
      return "RELU_N1_TO_1";
    case KILN_OP_RELU6:
      return "RELU6";
    case KILN_OP_RESHAPE:
      return "RESHAPE";
    case KILN_OP_RESIZE_BILINEAR:
      return "RESIZE_BILINEAR";
    case KILN_OP_RNN:
      return "RNN";
    case KILN_OP_SOFTMAX:
      return "SOFTMAX";
    case KILN_OP_SPACE_TO_DEPTH:
      return "SPACE_TO_DEPTH";
    case KILN_OP_SVDF:
      return "SVDF";
    case KILN_OP_TANH:
      return "TANH";
    case KILN_OP_CONCAT_EMBEDDINGS:
      return "CONCAT_EMBEDDINGS";
    case KILN_OP_SKIP_GRAM:
      return "SKIP_GRAM";
    case KILN_OP_CALL:
      return "CALL";
    case KILN_OP_CUSTOM:
      return "CUSTOM";
    case KILN_OP_EMBEDDING_LOOKUP_SPARSE:
      return "EMBEDDING_LOOKUP_SPARSE";
    case KILN_OP_PAD:
      return "PAD";
    case KILN_OP_UNIDIRECTIONAL_SEQUENCE_RNN:
      return "UNIDIRECTIONAL_SEQUENCE_RNN";
    case KILN_OP_GATHER:
      return "GATHER";
    case KILN_OP_BATCH_TO_SPACE_ND:
      return "BATCH_TO_SPACE_ND";
    case KILN_OP_SPACE_TO_BATCH_ND:
      return "SPACE_TO_BATCH_ND";
    case KILN_OP_TRANSPOSE:
      return "TRANSPOSE";
    case KILN_OP_MEAN:
      return "MEAN";
    case KILN_OP_SUB:
      return "SUB";
    case KILN_OP_DIV:
      return "DIV";
    case KILN_OP_SQUEEZE:
      return "SQUEEZE";
    case KILN_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
      return "UNIDIRECTIONAL_SEQUENCE_LSTM";
    case KILN_OP_STRIDED_SLICE:
      return "STRIDED_SLICE";
    case KILN_OP_BIDIRECTIONAL_SEQUENCE_RNN:
      return "BIDIRECTIONAL_SEQUENCE_RNN";
    case KILN_OP_EXP:
      return "EXP";
    case KILN_OP_TOPK_V2:
      return "TOPK_V2";
    case KILN_OP_SPLIT:
      return "SPLIT";
    case KILN_OP_LOG_SOFTMAX:
      return "LOG_SOFTMAX";
    case KILN_OP_DELEGATE:
      return "DELEGATE";
    case KILN_OP_BIDIRECTIONAL_SEQUENCE_LSTM:
      return "BIDIRECTIONAL_SEQUENCE_LSTM";
    case KILN_OP_CAST:
      return "CAST";
    case KILN_OP_PRELU:
      return "PRELU";
    case KILN_OP_MAXIMUM:
      return "MAXIMUM";
    case KILN_OP_ARG_MAX:
      return "ARG_MAX";
    case KILN_OP_MINIMUM:
      return "MINIMUM";
    case KILN_OP_LESS:
      return "LESS";
    case KILN_OP_NEG:
      return "NEG";
    case KILN_OP_PADV2:
      return "PADV2";
    case KILN_OP_GREATER:
      return "GREATER";
    case KILN_OP_GREATER_EQUAL:
      return "GREATER_EQUAL";
    case KILN_OP_LESS_EQUAL:
      return "LESS_EQUAL";
    case KILN_OP_SELECT:
      return "SELECT";
    case KILN_OP_SLICE:
      return "SLICE";
    case KILN_OP_SIN:
      return "SIN";
    case KILN_OP_TRANSPOSE_CONV:
      return "TRANSPOSE_CONV";
    case KILN_OP_SPARSE_TO_DENSE:
      return "SPARSE_TO_DENSE";
    case KILN_OP_TILE:
      return "TILE";
    case KILN_OP_EXPAND_DIMS:
      return "EXPAND_DIMS";
    case KILN_OP_EQUAL:
      return "EQUAL";
    case KILN_OP_NOT_EQUAL:
      return "NOT_EQUAL";
    case KILN_OP_LOG:
      return "LOG";
    case KILN_OP_SUM:
      return "SUM";
    case KILN_OP_SQRT:
      return "SQRT";
    case KILN_OP_RSQRT:
      return "RSQRT";
    case KILN_OP_SHAPE:
      return "SHAPE";
    case KILN_OP_POW:
      return "POW";
    case KILN_OP_ARG_MIN:
      return "ARG_MIN";
    case KILN_OP_FAKE_QUANT:
      return "FAKE_QUANT";
    case KILN_OP_REDUCE_PROD:
      return "REDUCE_PROD";
    case KILN_OP_REDUCE_MAX:
      return "REDUCE_MAX";
    case KILN_OP_PACK:
      return "PACK";
    case KILN_OP_LOGICAL_OR:
      return "LOGICAL_OR";
    case KILN_OP_ONE_HOT:
      return "ONE_HOT";
    case KILN_OP_LOGICAL_AND:
      return "LOGICAL_AND";
    case KILN_OP_LOGICAL_NOT:
      return "LOGICAL_NOT";
    case KILN_OP_UNPACK:
      return "UNPACK";
    case KILN_OP_REDUCE_MIN:
      return "REDUCE_MIN";
    case KILN_OP_FLOOR_DIV:
      return "FLOOR_DIV";
    case KILN_OP_REDUCE_ANY:
      return "REDUCE_ANY";
    case KILN_OP_SQUARE:
      return "SQUARE";
    case KILN_OP_ZEROS_LIKE:
      return "ZEROS_LIKE";
    case KILN_OP_FILL:
      return "FILL";
    case KILN_OP_FLOOR_MOD:
      return "FLOOR_MOD";
    case KILN_OP_RANGE:
      return "RANGE";
    case KILN_OP_RESIZE_NEAREST_NEIGHBOR:
      return "RESIZE_NEAREST_NEIGHBOR";
    case KILN_OP_LEAKY_RELU:
      return "LEAKY_RELU";
    case KILN_OP_SQUARED_DIFFERENCE:
      return "SQUARED_DIFFERENCE";
    case KILN_OP_MIRROR_PAD:
      return "MIRROR_PAD";
    case KILN_OP_ABS:
      return "ABS";
    case KILN_OP_SPLIT_V:
      return "SPLIT_V";
    case KILN_OP_UNIQUE:
      return "UNIQUE";
    case KILN_OP_CEIL:
      return "CEIL";
    case KILN_OP_REVERSE_V2:
      return "REVERSE_V2";
    case KILN_OP_ADD_N:
      return "ADD_N";
    case KILN_OP_GATHER_ND:
      return "GATHER_ND";
    case KILN_OP_COS:
      return "COS";
    case KILN_OP_WHERE:
      return "WHERE";
    case KILN_OP_RANK:
      return "RANK";
    case KILN_OP_ELU:
      return "ELU";
    case KILN_OP_REVERSE_SEQUENCE:
      return "REVERSE_SEQUENCE";
    case KILN_OP_MATRIX_DIAG:
      return "MATRIX_DIAG";
    case KILN_OP_QUANTIZE:
      return "QUANTIZE";
    case KILN_OP_MATRIX_SET_DIAG:
      return "MATRIX_SET_DIAG";
    case KILN_OP_ROUND:
      return "ROUND";
    case KILN_OP_HARD_SWISH:
      return "HARD_SWISH";
    case KILN_OP_IF:
      return "IF";
    case KILN_OP_WHILE:
      return "WHILE";
    case KILN_OP_NON_MAX_SUPPRESSION_V4:
      return "NON_MAX_SUPPRESSION_V4";
    case KILN_OP_NON_MAX_SUPPRESSION_V5:
      return "NON_MAX_SUPPRESSION_V5";
    case KILN_OP_SCATTER_ND:
      return "SCATTER_ND";
    case KILN_OP_SELECT_V2:
      return "SELECT_V2";
    case KILN_OP_DENSIFY:
      return "DENSIFY";
    case KILN_OP_SEGMENT_SUM:
      return "SEGMENT_SUM";
    case KILN_OP_BATCH_MATMUL:
      return "BATCH_MATMUL";
    case KILN_OP_PLACEHOLDER_FOR_GREATER_OP_CODES:
      return "PLACEHOLDER_FOR_GREATER_OP_CODES";
    case KILN_OP_CUMSUM:
      return "CUMSUM";
    case KILN_OP_CALL_ONCE:
      return "CALL_ONCE";
    case KILN_OP_BROADCAST_TO:
      return "BROADCAST_TO";
    case KILN_OP_RFFT2D:
      return "RFFT2D";
    case KILN_OP_CONV_3D:
      return "CONV_3D";
    case KILN_OP_IMAG:
      return "IMAG";
    case KILN_OP_REAL:
      return "REAL";
    case KILN_OP_COMPLEX_ABS:
      return "COMPLEX_ABS";
    case KILN_OP_HASHTABLE:
      return "HASHTABLE";
    case KILN_OP_HASHTABLE_FIND:
      return "HASHTABLE_FIND";
    case KILN_OP_HASHTABLE_IMPORT:
      return "HASHTABLE_IMPORT";
    case KILN_OP_HASHTABLE_SIZE:
      return "HASHTABLE_SIZE";
    case KILN_OP_REDUCE_ALL:
      return "REDUCE_ALL";
    case KILN_OP_CONV_3D_TRANSPOSE:
      return "CONV_3D_TRANSPOSE";
    case KILN_OP_VAR_HANDLE:
      return "VAR_HANDLE";
    case KILN_OP_READ_VARIABLE:
      return "READ_VARIABLE";
    case KILN_OP_ASSIGN_VARIABLE:
      return "ASSIGN_VARIABLE";
    case KILN_OP_BROADCAST_ARGS:
      return "BROADCAST_ARGS";
    case KILN_OP_RANDOM_STANDARD_NORMAL:
      return "RANDOM_STANDARD_NORMAL";
    case KILN_OP_BUCKETIZE:
      return "BUCKETIZE";
    case KILN_OP_RANDOM_UNIFORM:
      return "RANDOM_UNIFORM";
    case KILN_OP_MULTINOMIAL:
      return "MULTINOMIAL";
    case KILN_OP_GELU:
      return "GELU";
    case KILN_OP_DYNAMIC_UPDATE_SLICE:
      return "DYNAMIC_UPDATE_SLICE";
    case KILN_OP_RELU_0_TO_1:
      return "RELU_0_TO_1";
    case KILN_OP_UNSORTED_SEGMENT_PROD:
      return "UNSORTED_SEGMENT_PROD";
    case KILN_OP_UNSORTED_SEGMENT_MAX:
      return "UNSORTED_SEGMENT_MAX";
    case KILN_OP_UNSORTED_SEGMENT_SUM:
      return "UNSORTED_SEGMENT_SUM";
    case KILN_OP_ATAN2:
      return "ATAN2";
    case KILN_OP_UNSORTED_SEGMENT_MIN:
      return "UNSORTED_SEGMENT_MIN";
    case KILN_OP_SIGN:
      return "SIGN";
    case KILN_OP_BITCAST:
      return "BITCAST";
    case KILN_OP_BITWISE_XOR:
      return "BITWISE_XOR";
    case KILN_OP_RIGHT_SHIFT:
      return "RIGHT_SHIFT";
    case KILN_OP_STABLEHLO_LOGISTIC:
      return "STABLEHLO_LOGISTIC";
    case KILN_OP_STABLEHLO_ADD:
      return "STABLEHLO_ADD";
    case KILN_OP_STABLEHLO_DIVIDE:
      return "STABLEHLO_DIVIDE";
    case KILN_OP_STABLEHLO_MULTIPLY:
      return "STABLEHLO_MULTIPLY";
    case KILN_OP_STABLEHLO_MAXIMUM:
      return "STABLEHLO_MAXIMUM";
    case KILN_OP_STABLEHLO_RESHAPE:
      return "STABLEHLO_RESHAPE";
    case KILN_OP_STABLEHLO_CLAMP:
      return "STABLEHLO_CLAMP";
    case KILN_OP_STABLEHLO_CONCATENATE:
      return "STABLEHLO_CONCATENATE";
    case KILN_OP_STABLEHLO_BROADCAST_IN_DIM:
      return "STABLEHLO_BROADCAST_IN_DIM";
    case KILN_OP_STABLEHLO_CONVOLUTION:
      return "STABLEHLO_CONVOLUTION";
    case KILN_OP_STABLEHLO_SLICE:
      return "STABLEHLO_SLICE";
    case KILN_OP_STABLEHLO_CUSTOM_CALL:
      return "STABLEHLO_CUSTOM_CALL";
    case KILN_OP_STABLEHLO_REDUCE:
      return "STABLEHLO_REDUCE";
    case KILN_OP_STABLEHLO_ABS:
      return "STABLEHLO_ABS";
    case KILN_OP_STABLEHLO_AND:
      return "STABLEHLO_AND";
    case KILN_OP_STABLEHLO_COSINE:
      return "STABLEHLO_COSINE";
    case KILN_OP_STABLEHLO_EXPONENTIAL:
      return "STABLEHLO_EXPONENTIAL";
    case KILN_OP_STABLEHLO_FLOOR:
      return "STABLEHLO_FLOOR";
    case KILN_OP_STABLEHLO_LOG:
      return "STABLEHLO_LOG";
    case KILN_OP_STABLEHLO_MINIMUM:
      return "STABLEHLO_MINIMUM";
    case KILN_OP_STABLEHLO_NEGATE:
      return "STABLEHLO_NEGATE";
    case KILN_OP_STABLEHLO_OR:
      return "STABLEHLO_OR";
    case KILN_OP_STABLEHLO_POWER:
      return "STABLEHLO_POWER";
    case KILN_OP_STABLEHLO_REMAINDER:
      return "STABLEHLO_REMAINDER";
    case KILN_OP_STABLEHLO_RSQRT:
      return "STABLEHLO_RSQRT";
    case KILN_OP_STABLEHLO_SELECT:
      return "STABLEHLO_SELECT";
    case KILN_OP_STABLEHLO_SUBTRACT:
      return "STABLEHLO_SUBTRACT";
    case KILN_OP_STABLEHLO_TANH:
      return "STABLEHLO_TANH";
    case KILN_OP_STABLEHLO_SCATTER:
      return "STABLEHLO_SCATTER";
    case KILN_OP_STABLEHLO_COMPARE:
      return "STABLEHLO_COMPARE";
    case KILN_OP_STABLEHLO_CONVERT:
      return "STABLEHLO_CONVERT";
    case KILN_OP_STABLEHLO_DYNAMIC_SLICE:
      return "STABLEHLO_DYNAMIC_SLICE";
    case KILN_OP_STABLEHLO_DYNAMIC_UPDATE_SLICE:
      return "STABLEHLO_DYNAMIC_UPDATE_SLICE";
    case KILN_OP_STABLEHLO_PAD:
      return "STABLEHLO_PAD";
    case KILN_OP_STABLEHLO_IOTA:
      return "STABLEHLO_IOTA";
    case KILN_OP_STABLEHLO_DOT_GENERAL:
      return "STABLEHLO_DOT_GENERAL";
    case KILN_OP_STABLEHLO_REDUCE_WINDOW:
      return "STABLEHLO_REDUCE_WINDOW";
    case KILN_OP_STABLEHLO_SORT:
      return "STABLEHLO_SORT";
    case KILN_OP_STABLEHLO_WHILE:
      return "STABLEHLO_WHILE";
    case KILN_OP_STABLEHLO_GATHER:
      return "STABLEHLO_GATHER";
    case KILN_OP_STABLEHLO_TRANSPOSE:
      return "STABLEHLO_TRANSPOSE";
    case KILN_OP_DILATE:
      return "DILATE";
    case KILN_OP_STABLEHLO_RNG_BIT_GENERATOR:
      return "STABLEHLO_RNG_BIT_GENERATOR";
    case KILN_OP_REDUCE_WINDOW:
      return "REDUCE_WINDOW";
    case KILN_OP_STABLEHLO_COMPOSITE:
      return "STABLEHLO_COMPOSITE";
    case KILN_OP_STABLEHLO_SHIFT_LEFT:
      return "STABLEHLO_SHIFT_LEFT";
    case KILN_OP_STABLEHLO_CBRT:
      return "STABLEHLO_CBRT";
    case KILN_OP_STABLEHLO_CASE:
      return "STABLEHLO_CASE";
    default:
      return "UNKNOWN";
  }
}

#endif /* KILN_KILN_BUILTIN_OPS_H_ */
